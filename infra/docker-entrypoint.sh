#!/bin/sh
# Entry point of the ward image. Secrets come as files (compose secrets under /run/secrets): for
# every variable NAME_FROM_FILE=<path>, NAME is set to the file's content (trailing newline
# dropped) and NAME_FROM_FILE removed, then the command runs. Nothing is printed.
set -eu
for assignment in $(env | sed -n 's/^\([A-Z][A-Z0-9_]*\)_FROM_FILE=.*/\1/p'); do
  eval "path=\${${assignment}_FROM_FILE}"
  if [ ! -r "$path" ]; then
    echo "ward-entrypoint: ${assignment}_FROM_FILE: cannot read the file it names" >&2
    exit 78
  fi
  value=$(cat "$path")
  export "${assignment}=${value}"
  unset "${assignment}_FROM_FILE"
done
exec "$@"
