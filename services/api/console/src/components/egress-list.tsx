import type { Egress } from '../model/egress';
import { egressSummary, egressText } from '../model/egress';

/** Many connections start folded, as long output does. */
const FOLD_CONNECTIONS = 12;

/**
 * The connections a call's command made through the egress proxy: where each went and what it
 * carried, or why it was refused. Host and reason come from the sandbox and are shown as text.
 */
export function EgressList({ toolName, connections }: { toolName: string; connections: readonly Egress[] }) {
  if (connections.length === 0) return null;
  return (
    <details class="egress" open={connections.length <= FOLD_CONNECTIONS}>
      <summary>Network: {egressSummary(connections)}</summary>
      <ul aria-label={`Network connections of ${toolName}`}>
        {connections.map((egress, i) => (
          // The list only grows, so a position names one connection for good.
          <li key={i} class={egress.allowed ? 'egress-allowed' : 'egress-refused'}>
            {egressText(egress)}
          </li>
        ))}
      </ul>
    </details>
  );
}
