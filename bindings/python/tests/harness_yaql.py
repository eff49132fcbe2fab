#!/usr/bin/env python3
"""``muranopl harness yaql`` spoken through the Python package: the
conformance scorer drives the binding exactly as it drives the CLI
(``../shared/conformance/PROTOCOL.md``).

    yaql-score cases.jsonl -- python bindings/python/tests/harness_yaql.py

Values cross as Python objects: tagged JSON is decoded to ``datetime``,
``timedelta`` and dicts with non-string keys before evaluation, and the
Python result is encoded back, so the conversion code is what is tested.
"""

import datetime
import json
import math
import sys

from muranopl.yaql import factory, legacy, utils

OPTIONS = {'yaql.limitIterators': 100, 'yaql.memoryQuota': 20000}


def hashable(v):
    if isinstance(v, list):
        return tuple(hashable(x) for x in v)
    if isinstance(v, dict):
        return utils.FrozenDict({k: hashable(x) for k, x in v.items()})
    return v


def decode(v):
    if isinstance(v, list):
        return [decode(x) for x in v]
    if not isinstance(v, dict):
        return v
    if len(v) == 1:
        (tag, body), = v.items()
        if tag == '$dict':
            return {hashable(decode(k)): decode(x) for k, x in body}
        if tag == '$datetime':
            return datetime.datetime.fromisoformat(body)
        if tag == '$timespan':
            return datetime.timedelta(microseconds=body)
        if tag == '$float':
            return float(body)
    return {k: decode(x) for k, x in v.items()}


def encode(v):
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return {'$float': 'nan' if math.isnan(v) else
                    ('inf' if v > 0 else '-inf')}
        return v
    if isinstance(v, datetime.datetime):
        return {'$datetime': v.isoformat(timespec='microseconds')}
    if isinstance(v, datetime.timedelta):
        return {'$timespan': (v.days * 86400 + v.seconds) * 1000000
                + v.microseconds}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [encode(x) for x in v]
    if hasattr(v, 'items'):
        if all(isinstance(k, str) for k in v):
            return {k: encode(x) for k, x in v.items()}
        return {'$dict': [[encode(k), encode(x)] for k, x in v.items()]}
    raise TypeError(f'cannot encode {type(v).__name__}')


def main():
    engines = {
        False: factory.YaqlFactory(allow_delegates=True).create(
            dict(OPTIONS, **{'yaql.convertSetsToLists': True})),
        True: legacy.YaqlFactory().create(OPTIONS),
    }
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        resp = {'id': req.get('id')}
        try:
            expr = engines[bool(req.get('legacy'))](req['expr'])
            resp['result'] = encode(expr.evaluate(decode(req.get('data'))))
        except Exception as e:  # every failure is an answer
            resp['error'] = {'kind': type(e).__name__, 'message': str(e)}
        out.write(json.dumps(resp) + '\n')
        out.flush()


if __name__ == '__main__':
    main()
