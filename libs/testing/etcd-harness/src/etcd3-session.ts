import { Etcd3, EtcdAuthenticationFailedError, EtcdPermissionDeniedError, type IOptions } from 'etcd3';
import type { Target } from './target';

/** Per-call deadline for the etcd3 client in sessions. */
const CALL_DEADLINE_MS = 10_000;
/** How long a watcher may take to deliver an event. */
const WATCH_EVENT_TIMEOUT_MS = 10_000;

/** One observation of the etcd3 session; the transcript of a target is a list of these. */
export type SessionLine = readonly [label: string, value: unknown];

function client(target: Target, auth?: { username: string; password: string }): Etcd3 {
  const options: IOptions = {
    hosts: `http://${target.clientEndpoint}`,
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + CALL_DEADLINE_MS }),
    ...(auth ? { auth } : {}),
  };
  return new Etcd3(options);
}

async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return { ok: await run() };
  } catch (error) {
    if (error instanceof EtcdPermissionDeniedError) return { error: 'EtcdPermissionDeniedError', message: error.message };
    if (error instanceof EtcdAuthenticationFailedError) return { error: 'EtcdAuthenticationFailedError', message: error.message };
    return { error: (error as Error).constructor.name, message: (error as Error).message };
  }
}

/**
 * Drives the `etcd3` npm client (a client nobody here wrote) through auth setup, put/get, txn and
 * watch against a reset target, recording what it observes. The same transcript is expected from
 * etcd 3.4.23 and from ward.
 */
export async function etcd3Session(target: Target, rootPassword: string): Promise<SessionLine[]> {
  const lines: SessionLine[] = [];
  const admin = client(target);
  try {
    await admin.user('root').create(rootPassword);
    await admin.user('root').addRole('root');
    const role = await admin.role('app').create();
    await role.grant({ permission: 'Readwrite', range: admin.range({ prefix: 'app/' }) });
    await admin.user('alice').create('alice-pw');
    await admin.user('alice').addRole('app');
    lines.push(['roles of alice', await admin.user('alice').roles().then((roles) => roles.map((r) => r.name))]);
    const permissions = await role.permissions();
    lines.push(['permissions of app', permissions.map((p) => ({ permission: p.permission, start: p.range.start.toString(), end: p.range.end.toString() }))]);
    await admin.auth.authEnable();
  } finally {
    admin.close();
  }
  const alice = client(target, { username: 'alice', password: 'alice-pw' });
  const anonymous = client(target);
  const wrong = client(target, { username: 'alice', password: 'nope' });
  try {
    lines.push(['put app/a', await outcome(() => alice.put('app/a').value('1').then(() => 'done'))]);
    lines.push(['get app/a', await outcome(() => alice.get('app/a').string())]);
    lines.push(['get prefix app/', await outcome(() => alice.getAll().prefix('app/').strings())]);
    lines.push(['put other', await outcome(() => alice.put('other').value('x').then(() => 'done'))]);
    lines.push(['get other', await outcome(() => alice.get('other').string())]);
    lines.push(['anonymous get', await outcome(() => anonymous.get('app/a').string())]);
    lines.push(['wrong password get', await outcome(() => wrong.get('app/a').string())]);
    lines.push(['txn success', await outcome(() => alice.if('app/a', 'Value', '==', '1').then(alice.put('app/a').value('2')).else(alice.put('app/a').value('3')).commit().then((r) => r.succeeded))]);
    lines.push(['txn failure', await outcome(() => alice.if('app/a', 'Value', '==', '1').then(alice.put('app/a').value('4')).else(alice.get('app/a')).commit().then((r) => r.succeeded))]);
    lines.push(['txn touching other', await outcome(() => alice.if('other', 'Version', '>', 0).then(alice.put('app/a').value('5')).commit().then((r) => r.succeeded))]);
    lines.push(['value after txns', await outcome(() => alice.get('app/a').string())]);
    lines.push(['watch app/ prefix', await outcome(() => watchOnce(alice, 'app/', 'app/w', 'w1'))]);
    lines.push(['delete prefix', await outcome(() => alice.delete().prefix('app/').then((r) => r.deleted))]);
    lines.push(['get after delete', await outcome(() => alice.get('app/a').string())]);
  } finally {
    alice.close();
    anonymous.close();
    wrong.close();
  }
  return lines;
}

/** Opens a prefix watcher as `client`, writes `key`, and returns what the watcher saw. */
async function watchOnce(client: Etcd3, prefix: string, key: string, value: string): Promise<unknown> {
  const watcher = await client.watch().prefix(prefix).create();
  try {
    const seen = new Promise<{ key: string; value: string }>((resolvePromise, reject) => {
      const timer = setTimeout(() => reject(new Error('no watch event')), WATCH_EVENT_TIMEOUT_MS);
      watcher.on('put', (kv) => {
        clearTimeout(timer);
        resolvePromise({ key: kv.key.toString(), value: kv.value.toString() });
      });
      watcher.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    await client.put(key).value(value);
    return await seen;
  } finally {
    await watcher.cancel();
  }
}
