"""Concurrent flows of python-muranoclient's library against `muranopl serve`.

Run by tests/all/muranoclient.rs with the client's venv python:

    python muranoclient_flows.py URL TOKEN CLIENTS PACKAGE_DIR...

It imports each PACKAGE_DIR once (in the order given, as `murano
package-import` does with a requirement first), then starts CLIENTS
threads, each with its own `muranoclient.client.Client('1', ...)`, that
run the whole flow on an environment of their own: environment create,
session configure, services.post of the greeter and of a counter (with
the session header), session deploy, environment get until it is no
longer deploying, each application's action (`greet`, `increment`) read
from its `?._actions` (the client has no action list), actions.call,
actions.get_result until there is one (404 until then, as murano
answers), deployments list and each deployment's reports, environment delete, and the
environment list until it is gone.

It prints one JSON line per flow: {"client", "ok", "seconds", "steps",
"error"}; "error" holds the exception and its traceback when a step
raised (any HTTP error the client saw, such as a 500 or a 409).
"""

import json
import sys
import threading
import time
import traceback

from muranoclient import client as murano_client
from muranoclient.common import exceptions
from muranoclient.common import utils

# Every wait gives up after this long: the test bounds the whole run.
DEADLINE = 90.0


def wait_for(what, get, done):
    """get() until done(value); the value. Raises after DEADLINE."""
    started = time.monotonic()
    while True:
        value = get()
        if done(value):
            return value
        if time.monotonic() - started > DEADLINE:
            raise AssertionError('%s: still %r' % (what, value))
        time.sleep(0.1)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def task_result(c, env_id, task_id):
    """The task's result, None while it runs: murano answers 404 ("Result
    for task ... was not found.") until the task has one, as the server
    does."""
    try:
        return c.actions.get_result(env_id, task_id)
    except exceptions.HTTPNotFound as e:
        if 'was not found' not in str(e):
            raise
        return None


def flow(url, token, i, steps):
    c = murano_client.Client('1', endpoint=url, token=token)
    env = c.environments.create({'name': 'py-client-%d' % i})
    steps.append('environment-create')
    session = c.sessions.configure(env.id)
    steps.append('session-configure')
    greeter = {
        '?': {'id': 'g%d' % i, 'type': 'com.example.Greeter'},
        'who': 'client %d' % i,
    }
    # The counter (on the server's search path) spins a while as it
    # deploys, so that deployments overlap.
    counter = {
        '?': {'id': 'c%d' % i, 'type': 'com.example.Counter'},
        'start': i,
        'spin': 5000,
    }
    for app in (greeter, counter):
        added = c.services.post(env.id, path='/', data=app,
                                session_id=session.id)
        check(added.to_dict()['?']['id'] == app['?']['id'],
              'services.post: %r' % added)
    steps.append('services-post')
    c.sessions.deploy(env.id, session.id)
    steps.append('session-deploy')
    shown = wait_for('deploy', lambda: c.environments.get(env.id),
                     lambda e: e.status not in ('deploying', 'pending'))
    check(shown.status == 'ready', 'status %r' % shown.status)
    services = {s['?']['id']: s for s in shown.services}
    check(services['g%d' % i]['said'] == ['hello, client %d' % i],
          'said %r' % services)
    check(services['c%d' % i]['count'] == i, 'count %r' % services)
    steps.append('deployed')
    for sid, name, args, want in [
        ('g%d' % i, 'greet', {'who': 'thread %d' % i}, 'hello, thread %d' % i),
        ('c%d' % i, 'increment', {'by': 2}, i + 2),
    ]:
        actions = services[sid]['?']['_actions']
        found = [k for k, a in actions.items() if a['name'] == name]
        check(len(found) == 1, 'actions %r' % actions)
        task = c.actions.call(env.id, found[0], arguments=args)
        result = wait_for('action', lambda: task_result(c, env.id, task),
                          lambda r: r is not None)
        check(result == {'isException': False, 'result': want},
              'result %r' % result)
        # The next action waits for this one's deployment to end.
        wait_for('action end', lambda: c.environments.get(env.id).status,
                 lambda status: status == 'ready')
    steps.append('actions')
    deployments = wait_for(
        'deployments', lambda: c.deployments.list(env.id),
        lambda ds: all(d.state != 'running' for d in ds))
    states = [d.state for d in deployments]
    check(states == ['success'] * 3, 'deployments %r' % states)
    said = sorted(r.text for d in deployments
                  for r in c.deployments.reports(env.id, d.id)
                  if r.text.startswith(('hello, ', 'counter at ')))
    want = sorted(['hello, client %d' % i, 'hello, thread %d' % i,
                   'counter at %d' % i, 'counter at %d' % (i + 2)])
    check(said == want, 'reports %r' % said)
    steps.append('deployments')
    c.environments.delete(env.id)
    wait_for('delete', lambda: [e.id for e in c.environments.list()],
             lambda ids: env.id not in ids)
    steps.append('environment-delete')


def run(url, token, i, out, lock):
    steps = []
    started = time.monotonic()
    error = None
    try:
        flow(url, token, i, steps)
    except Exception:
        error = traceback.format_exc()
    line = json.dumps({
        'client': i,
        'ok': error is None,
        'seconds': round(time.monotonic() - started, 3),
        'steps': steps,
        'error': error,
    })
    with lock:
        out.append(line)


def main():
    url, token, clients = sys.argv[1], sys.argv[2], int(sys.argv[3])
    c = murano_client.Client('1', endpoint=url, token=token)
    for path in sys.argv[4:]:
        package = utils.Package.from_file(path)
        name = package.manifest['FullName']
        c.packages.create({'is_public': False}, {name: package.file()})
        print(json.dumps({'imported': name}), flush=True)
    out, lock = [], threading.Lock()
    threads = [threading.Thread(target=run, args=(url, token, i, out, lock))
               for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for line in out:
        print(line)


if __name__ == '__main__':
    main()
