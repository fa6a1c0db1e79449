"""Shared by the client scripts: results made comparable between servers.

Revisions, raft terms, cluster, member and lease IDs differ from one server to another; they are
replaced by their kind, so that only the shape and the data of the answers are compared.
"""
import json

VARYING = {'revision', 'create_revision', 'mod_revision', 'raft_term', 'cluster_id', 'member_id',
           'ID', 'id', 'lease', 'watch_id', 'leader', 'raft_index', 'raftIndex', 'raftTerm',
           'db_size', 'dbSize', 'db_size_in_use', 'dbSizeInUse', 'version_server'}


def normalise(value):
    if isinstance(value, bytes):
        return value.decode('utf-8', 'replace')
    if isinstance(value, dict):
        return {k: ('<varies>' if k in VARYING else normalise(v)) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [normalise(v) for v in value]
    return value


def emit(results):
    print(json.dumps(normalise(results), sort_keys=True))
