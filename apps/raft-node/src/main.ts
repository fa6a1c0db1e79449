/**
 * The raft-node process: reads RAFT_NODE_* once, starts the member, stops on SIGINT/SIGTERM.
 * `main.js snapshot-restore --file ... --data-dir ... --member-id ... --members ...` instead writes
 * a member's data dir for a new cluster from a backup file (src/backup/restore.ts) and exits.
 * Exit codes: 0 stopped on a signal, or removed from the cluster (as etcd 3.4 exits 0 after
 * logging "the member has been permanently removed from the cluster"); 1 could not start or
 * storage failed while running (e.g. a corrupt write-ahead log: the message names the file and
 * byte offset); 2 bad configuration.
 */
import { ConfigError } from '@ward/platform/config';
import { EXIT_CONFIG } from '@ward/platform/process';

const EXIT_FAILURE = 1;
/** A removed member stops this long after it learnt it (etcd's stopWithDelay): its last answers, e.g. to the MemberRemove that removed it when it led, still go out. */
const REMOVED_STOP_DELAY_MS = 1000;

// Each path imports its modules when taken (the bundle splits them into chunks): a restore does not
// load the member's gRPC, HTTP and logging packages, a fifth of a second it would spend for nothing.
async function main(): Promise<void> {
  if (process.argv[2] === 'snapshot-restore') {
    const { runRestoreCommand } = await import('./backup/restore');
    process.exitCode = await runRestoreCommand(
      process.argv.slice(3),
      (line) => process.stdout.write(`${line}\n`),
      (line) => process.stderr.write(`${line}\n`),
    );
    return;
  }
  const { loadRaftNodeConfig } = await import('./config');
  const { createMemberLogger, createRaftNode } = await import('./raft-node');
  let config;
  try {
    config = loadRaftNodeConfig(process.env);
  } catch (error) {
    process.stderr.write(`raft-node: ${(error as Error).message}\n`);
    process.exitCode = error instanceof ConfigError ? EXIT_CONFIG : EXIT_FAILURE;
    return;
  }
  const logger = createMemberLogger(config);
  let member;
  try {
    member = await createRaftNode(config, { logger });
  } catch (error) {
    logger.fatal({ err: error }, 'member could not start');
    process.stderr.write(`raft-node: cannot start: ${(error as Error).message}\n`);
    process.exitCode = EXIT_FAILURE;
    return;
  }
  const stopOnSignal = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'stopping');
    void member.stop().then(() => process.exit(0));
  };
  void member.removed.then(async () => {
    await new Promise((resolve) => setTimeout(resolve, REMOVED_STOP_DELAY_MS));
    process.stderr.write('raft-node: the member has been permanently removed from the cluster; the data dir used by this member must be removed\n');
    await member.stop();
    process.exit(0);
  });
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  void member.fatal.then((error) => {
    process.stderr.write(`raft-node: storage failed: ${(error as Error).message}\n`);
    process.exit(EXIT_FAILURE);
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`raft-node: internal error: ${(error as Error).message}\n`);
  process.exit(EXIT_FAILURE);
});
