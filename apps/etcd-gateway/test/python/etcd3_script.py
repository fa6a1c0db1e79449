"""The same operations through Debian's python3-etcd3 (gRPC), printed normalised.

Usage: etcd3_script.py HOST PORT KEY_PREFIX
"""
import sys
import threading

import etcd3

from normalise import emit

host, port, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
client = etcd3.client(host=host, port=port, timeout=20)
out = {}

client.put(prefix + 'a', '1')
out['put_if_not_exists_existing'] = client.put_if_not_exists(prefix + 'a', 'x')
out['put_if_not_exists_new'] = client.put_if_not_exists(prefix + 'b', '2')
value, meta = client.get(prefix + 'a')
out['get'] = [value, meta.key, meta.version]
out['get_missing'] = list(client.get(prefix + 'zz'))
out['get_prefix'] = sorted((value, meta.key) for value, meta in client.get_prefix(prefix))
out['replace_ok'] = client.replace(prefix + 'a', b'1', b'3')
out['replace_stale'] = client.replace(prefix + 'a', b'1', b'4')
succeeded, responses = client.transaction(
    compare=[client.transactions.value(prefix + 'a') == '3'],
    success=[client.transactions.put(prefix + 'c', 'txn')],
    failure=[],
)
out['txn'] = [succeeded, len(responses)]

lease = client.lease(60)
client.put(prefix + 'leased', 'v', lease=lease)
out['lease_keys'] = sorted(lease.keys)
out['lease_ttl_positive'] = lease.remaining_ttl > 0
out['lease_refresh'] = [r.TTL for r in lease.refresh()]
lease.revoke()
out['after_revoke'] = list(client.get(prefix + 'leased'))

lock = client.lock(prefix + 'lock', ttl=60)
out['lock_acquire'] = lock.acquire(timeout=10)
out['lock_held'] = lock.is_acquired()
out['lock_release'] = lock.release()

members = list(client.members)
out['members_have_client_urls'] = all(len(m.client_urls) > 0 for m in members)
status = client.status()
out['status_fields'] = [status.version.count('.') == 2, status.leader is not None]

events, cancel = client.watch_prefix(prefix + 'w/')
seen = []


def read_three():
    for event in events:
        seen.append((type(event).__name__, event.key, event.value))
        if len(seen) == 3:
            return


reader = threading.Thread(target=read_three)
reader.start()
client.put(prefix + 'w/1', 'one')
client.put(prefix + 'w/2', 'two')
client.delete(prefix + 'w/1')
reader.join(20)
cancel()
out['watch_events'] = seen

out['delete'] = client.delete(prefix + 'b')
out['delete_missing'] = client.delete(prefix + 'b')
out['delete_prefix'] = client.delete_prefix(prefix).deleted
emit(out)
client.close()
