import type { ExecuteToolReply } from '@app/contracts';

/**
 * The largest tool reply, as JSON, that the sandbox sends back. NATS refuses messages over its
 * max_payload (1 MiB by default), and JSON can take up to six bytes per output byte (a control
 * character becomes \u0000), so a reply near SANDBOX_MAX_OUTPUT_BYTES could be refused whole.
 * Leaves room under 1 MiB for the envelope.
 */
export const MAX_TOOL_REPLY_BYTES = 960 * 1024;

export const REPLY_CUT_MARKER = '\n[output cut to fit one bus message]';

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/**
 * The reply as is when it fits in `maxBytes` of JSON, else with its output cut (and marked) until
 * it does. Egress records (up to 1,000 per command, each with a host of up to 253 characters) go
 * first when even an empty output would not fit: the oldest are kept and the output says how many
 * were left out.
 */
export function fitReply(reply: ExecuteToolReply, maxBytes = MAX_TOOL_REPLY_BYTES): ExecuteToolReply {
  if (jsonBytes(reply) <= maxBytes) return reply;
  return fitOutput(fitEgress(reply, maxBytes), maxBytes);
}

function fitEgress(reply: ExecuteToolReply, maxBytes: number): ExecuteToolReply {
  const egress = reply.egress ?? [];
  const withRecords = (count: number): ExecuteToolReply => ({
    ...reply,
    egress: egress.slice(0, count),
    output: `${EGRESS_CUT_NOTE(egress.length - count)}${REPLY_CUT_MARKER}`,
  });
  if (egress.length === 0 || jsonBytes(withRecords(egress.length)) <= maxBytes) return reply;
  let fits = 0;
  let over = egress.length;
  while (over - fits > 1) {
    const mid = (fits + over) >> 1;
    if (jsonBytes(withRecords(mid)) <= maxBytes) fits = mid;
    else over = mid;
  }
  return { ...reply, egress: egress.slice(0, fits), output: `${EGRESS_CUT_NOTE(egress.length - fits)}${reply.output}` };
}

const EGRESS_CUT_NOTE = (count: number) => `[egress: ${count} connection(s) not recorded: the reply must fit one bus message]\n`;

function fitOutput(reply: ExecuteToolReply, maxBytes: number): ExecuteToolReply {
  if (jsonBytes(reply) <= maxBytes) return reply;
  const withOutput = (chars: number) => ({ ...reply, output: reply.output.slice(0, chars) + REPLY_CUT_MARKER });
  if (jsonBytes(withOutput(0)) > maxBytes) throw new Error(`the tool reply is over ${maxBytes} bytes even without its output`);
  // The longest prefix that fits: JSON size grows with the prefix, so a binary search finds it.
  let fits = 0;
  let over = reply.output.length;
  while (over - fits > 1) {
    const mid = (fits + over) >> 1;
    if (jsonBytes(withOutput(mid)) <= maxBytes) fits = mid;
    else over = mid;
  }
  return withOutput(fits);
}
