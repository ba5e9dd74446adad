// `canon check`: parses its arguments, runs the check with progress on stderr, prints the report; the exit code to use.
import { CHECK_USAGE, parseCheckArgs, UsageError } from './options.js';
import { renderJson, renderText } from './render-text.js';
import { runCheck } from './runner.js';

export interface CommandIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

/** 0: no rule failed; 1: a rule failed; 2: bad usage (issue 30.3: errors are not failures). */
export async function checkCommand(argv: string[], io: CommandIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  let options;
  try {
    options = parseCheckArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`canon check: ${err.message}\n\n${CHECK_USAGE}\n`);
    return 2;
  }
  if (options === 'help') {
    io.stdout.write(`${CHECK_USAGE}\n`);
    return 0;
  }
  const tty = io.stderr.isTTY === true;
  let report;
  try {
    report = await runCheck(options, {
      // Progress goes to stderr, so that stdout stays the report (JSON included): one updating line on a terminal.
      rule: (i, total, id) => io.stderr.write(tty ? `\r\u001b[2Kchecking [${i}/${total}] ${id}` : `canon check: [${i}/${total}] ${id}\n`),
    });
  } catch (err) {
    // Not a rule's verdict: the check could not run at all (an unreadable --openapi file, say).
    io.stderr.write(`${tty ? '\r\u001b[2K' : ''}canon check: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  if (tty) io.stderr.write('\r\u001b[2K');
  io.stdout.write(options.json ? renderJson(report) : renderText(report, io.stdout.isTTY === true && !process.env.NO_COLOR));
  return report.summary.fail > 0 ? 1 : 0;
}
