"""Datetime conversions shared with the native module (not a public API)."""

import datetime as _dt

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def from_datetime(value):
    """``(microseconds since the epoch, UTC offset in seconds)`` of a
    datetime; a naive one is taken as UTC."""
    offset = value.utcoffset()
    if offset is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
        offset = _dt.timedelta(0)
    delta = value - _EPOCH
    micros = (delta.days * 86400 + delta.seconds) * 1000000 + delta.microseconds
    return micros, int(offset.total_seconds())


def to_datetime(micros, offset):
    """The datetime at ``micros`` since the epoch, in the UTC offset
    ``offset`` (seconds)."""
    tz = _dt.timezone.utc if offset == 0 else _dt.timezone(_dt.timedelta(seconds=offset))
    return (_EPOCH + _dt.timedelta(microseconds=micros)).astimezone(tz)
