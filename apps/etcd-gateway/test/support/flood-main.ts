// A wrong-password Authenticate flood in its own process (as an attacker is on its own machine):
// argv address, clients, user. stdin lines: `on`, `off` (acknowledged by the same word once every
// loop obeys), `stop` (prints the answer counts as JSON, then exits).
import { createInterface } from 'node:readline';
import { startAuthenticateFlood } from './auth-flood';

const [address, clients, user] = process.argv.slice(2) as [string, string, string];
const flood = startAuthenticateFlood(address, Number(clients), user);
await flood.setActive(false);
process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'on' || line === 'off') {
    await flood.setActive(line === 'on');
    process.stdout.write(`${line}\n`);
  } else if (line === 'stop') {
    await flood.stop();
    process.stdout.write(`${JSON.stringify({ answers: Object.fromEntries(flood.answers), checkedMs: flood.checkedMs })}\n`);
    process.exit(0);
  }
}
