"""The same operations through Debian's python3-etcd3gw (the JSON gateway), printed normalised.

Usage: etcd3gw_script.py HOST PORT KEY_PREFIX
"""
import sys
import threading

from etcd3gw.client import Etcd3Client

from normalise import emit

host, port, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
client = Etcd3Client(host=host, port=port, api_path='/v3/', timeout=20)
out = {}

out['put'] = client.put(prefix + 'a', '1')
out['create_existing'] = client.create(prefix + 'a', 'x')
out['create_new'] = client.create(prefix + 'b', '2')
out['get'] = client.get(prefix + 'a')
out['get_missing'] = client.get(prefix + 'zz')
out['get_prefix'] = sorted((value, meta['key']) for value, meta in client.get_prefix(prefix))
out['replace_ok'] = client.replace(prefix + 'a', '1', '3')
out['replace_stale'] = client.replace(prefix + 'a', '1', '4')
out['txn'] = client.transaction({
    'compare': [{'key': 'YQ==', 'result': 'EQUAL', 'target': 'VALUE', 'value': 'eg=='}],
    'success': [],
    'failure': [],
}).get('succeeded', False)

lease = client.lease(60)
client.put(prefix + 'leased', 'v', lease=lease)
out['lease_keys'] = sorted(lease.keys())
out['lease_ttl_positive'] = lease.ttl() > 0
out['lease_refresh'] = lease.refresh()
out['lease_revoke'] = lease.revoke()
out['after_revoke'] = client.get(prefix + 'leased')

lock = client.lock(prefix + 'lock', ttl=60)
out['lock_acquire'] = lock.acquire()
out['lock_held'] = lock.is_acquired()
out['lock_release'] = lock.release()

members = client.members()
out['members_have_client_urls'] = all(len(m.get('clientURLs', [])) > 0 for m in members)
status = client.status()
out['status_fields'] = sorted(k for k in ('header', 'version', 'leader') if k in status)

# A watch on a prefix receiving three events, then cancelled (the connection closed).
events, cancel = client.watch_prefix(prefix + 'w/')
seen = []


def read_three():
    for event in events:
        seen.append((event.get('type', 'PUT'), event['kv']['key'], event['kv'].get('value', b'')))
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
out['delete_prefix'] = client.delete_prefix(prefix)
emit(out)
