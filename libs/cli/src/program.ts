import { Command, InvalidArgumentError, Option } from 'commander';
import { version } from '../package.json';
import { parseCount, parseEnvPair, parseEventId, parseLimit, parseMaxCostUsd, parseMaxTokens, parseSecretName } from './arguments';
import type { ApprovalChoice } from './approval-choice';
import { APPROVAL_CHOICES } from './approval-choice';
import { approveCommand, cancelCommand, sendCommand } from './commands/task-actions.command';
import { downloadCommand } from './commands/download.command';
import { fileGetCommand } from './commands/file-get.command';
import { filesCommand } from './commands/files.command';
import { forkCommand } from './commands/fork.command';
import { loginCommand } from './commands/login.command';
import { logsCommand } from './commands/logs.command';
import { lsCommand } from './commands/ls.command';
import { runCommand } from './commands/run.command';
import {
  ALL_RUNS_BOUND,
  scheduleCreateCommand,
  scheduleLsCommand,
  schedulePauseCommand,
  scheduleRmCommand,
  scheduleRunsCommand,
  scheduleShowCommand,
} from './commands/schedule.command';
import { showCommand } from './commands/show.command';
import type { CliContext } from './context';
import { CliExit, ExitCode } from './exit-codes';

const CHOICES = Object.keys(APPROVAL_CHOICES);

const collect = (value: string, previous: string[]) => [...previous, value];
const approveOption = () => new Option('--approve <choice>', 'decide every approval this way instead of asking').choices(CHOICES);
const jsonOption = () => new Option('--json', 'one JSON object per line');

interface SendFlags {
  readonly json?: boolean;
  readonly interrupt?: boolean;
  readonly rollback?: boolean;
  readonly reject?: boolean;
  readonly maxTokens?: number;
  readonly maxCost?: number;
}

/**
 * The `ats` commands. Each action resolves to an exit status passed to `done`; errors are thrown
 * to main, which prints them.
 */
export function buildProgram(ctx: CliContext, done: (code: ExitCode) => void): Command {
  const program = new Command('ats')
    .description('Run and follow tasks of the agentic task service (ATS_URL, ATS_API_KEY, or `ats login`).')
    .version(version)
    .showHelpAfterError()
    .configureOutput({ writeOut: (text) => ctx.term.write(text), writeErr: (text) => process.stderr.write(text) });

  program
    .command('run')
    .description('create a task and follow it: tool calls, results, model text, usage, artifacts')
    .argument('<message>', 'what the agent should do')
    .option('--file <path>', 'upload a file into the workspace (repeatable; a .zip is extracted)', collect, [])
    .option('--env <K=V>', 'an environment value for the task (repeatable)', parseEnvPair, {})
    .option('--secret <NAME>', 'a secret from the environment variable NAME, else asked for without echo (repeatable)', parseSecretName, [])
    .option('--ask', 'ask before each tool call: once / always / deny', false)
    .option('--detach', 'print the task id and leave it running', false)
    .option('--max-tokens <n>', "the task's token budget over all its turns (default: the service's)", parseMaxTokens)
    .option('--max-cost <usd>', "the task's cost budget in USD over all its turns, e.g. 2.5 (default: the service's)", parseMaxCostUsd)
    .addOption(approveOption())
    .addOption(jsonOption())
    .action(async (message: string, options) => done(await runCommand(ctx, message, { json: false, ...options })));

  program
    .command('ls')
    .description('your tasks, newest first')
    .option('--all', 'include tasks created with showInHistory: false', false)
    .option('--limit <n>', 'at most this many', parseCount, 50)
    .addOption(jsonOption())
    .action(async (options) => done(await lsCommand(ctx, { json: false, ...options })));

  program
    .command('show')
    .description("a task's status, messages, pending approvals, usage and artifacts")
    .argument('<id>')
    .addOption(jsonOption())
    .action(async (id: string, options) => done(await showCommand(ctx, id, { json: false, ...options })));

  program
    .command('logs')
    .description("a task's events (the whole history, or after --after)")
    .argument('<id>')
    .option('-f, --follow', 'go on live to the end of the turn', false)
    .option('--after <n>', 'only events after this id', parseCount, 0)
    .addOption(approveOption())
    .addOption(jsonOption())
    .action(async (id: string, options) => done(await logsCommand(ctx, id, { json: false, ...options })));

  program
    .command('send')
    .description('a follow-up message in the same workspace (queued while a turn runs, unless one of the options says otherwise)')
    .argument('<id>')
    .argument('<message>')
    .addOption(
      new Option('--interrupt', 'stop the running turn (as cancel does) and start this one at once').conflicts(['rollback', 'reject']),
    )
    .addOption(
      new Option('--rollback', 'as --interrupt, then undo the stopped turn: its files and its place in the context').conflicts(['reject']),
    )
    .addOption(new Option('--reject', 'refuse to send while a turn runs (exit status of a conflict, nothing recorded)'))
    .option('--max-tokens <n>', "the task's token budget from now on, higher or lower (default: it stays)", parseMaxTokens)
    .option('--max-cost <usd>', "the task's cost budget in USD from now on, e.g. 2.5 (default: it stays)", parseMaxCostUsd)
    .addOption(jsonOption())
    .action(async (id: string, message: string, options: SendFlags) => {
      const ifRunning = options.interrupt ? 'interrupt' : options.rollback ? 'rollback' : options.reject ? 'reject' : undefined;
      done(
        await sendCommand(ctx, id, message, {
          json: options.json ?? false,
          ifRunning,
          maxTokens: options.maxTokens,
          maxCost: options.maxCost,
        }),
      );
    });

  program
    .command('approve')
    .description('decide a tool call waiting for approval')
    .argument('<id>')
    .argument('<call>')
    .argument('<choice>', CHOICES.join('|'), (choice: string): ApprovalChoice => {
      if (!Object.hasOwn(APPROVAL_CHOICES, choice)) throw new InvalidArgumentError(`expected one of ${CHOICES.join(', ')}`);
      return choice as ApprovalChoice;
    })
    .action(async (id: string, call: string, choice: ApprovalChoice) => done(await approveCommand(ctx, id, call, choice)));

  program
    .command('cancel')
    .description('stop the running turn and drop queued follow-ups')
    .argument('<id>')
    .action(async (id: string) => done(await cancelCommand(ctx, id)));

  program
    .command('download')
    .description('artifacts (all when no path is given) into a folder')
    .argument('<id>')
    .argument('[paths...]', 'artifact paths, e.g. downloads/report.md')
    .option('-o, --output <dir>', 'where to write them', '.')
    .action(async (id: string, paths: string[], options) => done(await downloadCommand(ctx, id, paths, options)));

  program
    .command('fork')
    .description('a new task from this one up to event N (a message, tool_result or done), going on from there')
    .argument('<id>')
    .requiredOption('--after <n>', 'the event to fork after', parseEventId)
    .option('--message <text>', 'after a done only: starts a turn in the fork with this message')
    .option('--auto-execute', 'the fork runs tools without asking')
    .option('--no-auto-execute', 'the fork asks before each tool call (default: as the source)')
    .option('--detach', 'print the fork id and leave it running', false)
    .addOption(approveOption())
    .addOption(jsonOption())
    .action(async (id: string, options) => done(await forkCommand(ctx, id, { json: false, ...options })));

  program
    .command('files')
    .description("the workspace's files (sha256, size, path) as of event N, or now; --get saves one")
    .argument('<id>')
    .option('--at <n>', 'right after this event (default: now)', parseEventId)
    .option('--get <path>', 'save this file (as of --at) instead of listing')
    .option('-o, --output <file>', 'with --get: where to write it (default: its path under the current folder); never overwritten')
    .addOption(jsonOption())
    .action(async (id: string, options: { at?: number; get?: string; output?: string; json?: boolean }) => {
      if (options.get !== undefined) return done(await fileGetCommand(ctx, id, options.get, options));
      if (options.output !== undefined) throw new CliExit(ExitCode.failed, 'ats: -o needs --get <path>');
      done(await filesCommand(ctx, id, { json: false, ...options }));
    });

  const schedule = program.command('schedule').description('tasks started on a cron: create, ls, show, runs, pause, resume, rm');
  schedule
    .command('create')
    .description('start a task (or a follow-up into --target) at each due time of a cron (5 fields, or 6 with seconds first)')
    .argument('<cron>', 'e.g. "0 9 * * MON-FRI"')
    .argument('<message>', 'what each run asks the agent')
    .option('--tz <zone>', 'IANA time zone the cron is read in (default UTC)')
    .option('--target <id>', 'each run is a follow-up into this task instead of a new task')
    .addOption(
      new Option('--overlap <policy>', 'a due time whose previous run still runs: skip it, or run anyway').choices(['skip', 'enqueue']),
    )
    .option('--paused', 'create it paused', false)
    .option('--env <K=V>', 'an environment value for each task (repeatable)', parseEnvPair, {})
    .option('--secret <NAME>', 'a secret from the environment variable NAME, else asked for without echo (repeatable)', parseSecretName, [])
    .option('--max-tokens <n>', "each run's token budget (default: the service's)", parseMaxTokens)
    .option('--max-cost <usd>', "each run's cost budget in USD, e.g. 2.5 (default: the service's)", parseMaxCostUsd)
    .addOption(jsonOption())
    .action(async (cron: string, message: string, options) =>
      done(await scheduleCreateCommand(ctx, cron, message, { json: false, ...options })),
    );
  schedule
    .command('ls')
    .description('your schedules, newest first')
    .addOption(jsonOption())
    .action(async (options) => done(await scheduleLsCommand(ctx, { json: false, ...options })));
  schedule
    .command('show')
    .description('a schedule and its latest runs (started, skipped, failed, and why)')
    .argument('<id>')
    .option('--runs <n>', 'how many runs (1-100)', parseCount, 10)
    .addOption(jsonOption())
    .action(async (id: string, options) => done(await scheduleShowCommand(ctx, id, { json: false, ...options })));
  schedule
    .command('runs')
    .description("a schedule's runs, newest first: due time in its zone, started (the task) / skipped / failed (and why)")
    .argument('<id>')
    .option('--limit <n>', 'at most this many, read page after page', parseLimit, 20)
    .addOption(new Option('--all', `every run (at most the ${ALL_RUNS_BOUND} newest, and says so)`).conflicts('limit'))
    .addOption(jsonOption())
    .action(async (id: string, options) => done(await scheduleRunsCommand(ctx, id, { json: false, all: false, ...options })));
  for (const [name, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    schedule
      .command(name)
      .description(paused ? 'stop the runs until resumed' : 'run again from now on (due times while paused are not run)')
      .argument('<id>')
      .addOption(jsonOption())
      .action(async (id: string, options) => done(await schedulePauseCommand(ctx, id, paused, { json: false, ...options })));
  }
  schedule
    .command('rm')
    .description('delete a schedule (the tasks it started stay)')
    .argument('<id>')
    .action(async (id: string) => done(await scheduleRmCommand(ctx, id)));

  program
    .command('login')
    .description('store the service URL and API key in your config folder (mode 0600)')
    .option('--url <url>', 'the service URL')
    .action(async (options) => done(await loginCommand(ctx, options)));

  return program;
}
