// Preloaded (node --import) into every process tools/start.mjs runs: the launcher holds the write
// end of this process's stdin, and the kernel closes it when the launcher exits, however it ends
// (Ctrl-C, a crash, SIGKILL). Then this process stops as on SIGTERM (its own graceful stop), and
// exits anyway after a grace period: no process of `npm start` outlives the launcher.
const GRACE_MS = 5000;
let stopping = false;

function parentGone() {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(1), GRACE_MS).unref();
  process.kill(process.pid, 'SIGTERM');
}

const stdin = process.stdin;
stdin.on('end', parentGone);
stdin.on('close', parentGone);
stdin.on('error', parentGone);
stdin.resume(); // nothing is ever written; reading is how the end is seen
// The pipe alone must not keep a process alive that is otherwise done.
if (typeof stdin.unref === 'function') stdin.unref();
