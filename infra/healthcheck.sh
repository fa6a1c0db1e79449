#!/bin/bash
# Health check of the ward image: `ward-healthcheck <port> <path>` exits 0 when
# http://127.0.0.1:<port><path> answers 200. Bash builtins only (no node start-up, no fork), so a
# check every few seconds in every container costs next to nothing.
port="${1:?port}" path="${2:?path}"
exec 3<>"/dev/tcp/127.0.0.1/${port}" || exit 1
printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$path" >&3 || exit 1
IFS= read -r -t 2 status <&3 || exit 1
[[ "$status" == HTTP/1.[01]\ 200\ * ]]
