import type { AtsClient } from '@agentic-task-service/client';
import { useState } from 'preact/hooks';
import type { Row } from '../components/key-value-rows';
import { KeyValueRows, rowsToRecord } from '../components/key-value-rows';
import { messageOf } from '../errors';
import { hrefOf } from '../route';

export function CreateTaskPage({ client }: { client: AtsClient }) {
  const [message, setMessage] = useState('');
  const [files, setFiles] = useState<File[]>([]);
  const [askFirst, setAskFirst] = useState(false);
  const [env, setEnv] = useState<Row[]>([]);
  const [secrets, setSecrets] = useState<Row[]>([]);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const { id } = await client.tasks.create({
        message,
        autoExecute: !askFirst,
        env: rowsToRecord(env),
        secrets: rowsToRecord(secrets),
        files: files.length ? files.map((file) => ({ name: file.name, content: file, type: file.type || undefined })) : undefined,
      });
      // The values leave this page's memory at once: the task page shows secret names only.
      setSecrets([]);
      location.hash = hrefOf({ page: 'task', id });
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <h1>New task</h1>
      <form class="create" onSubmit={(event) => void submit(event)}>
        <label>
          Message
          <textarea required rows={5} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
        </label>
        <label>
          Files
          <input type="file" multiple onChange={(e) => setFiles([...(e.currentTarget.files ?? [])])} />
        </label>
        <p class="hint">Files are put into the task's workspace; a .zip is extracted there.</p>
        <label class="inline">
          <input type="checkbox" checked={askFirst} onChange={(e) => setAskFirst(e.currentTarget.checked)} />
          Ask before running tools
        </label>
        <KeyValueRows legend="Environment" rows={env} onChange={setEnv} />
        <KeyValueRows legend="Secrets" rows={secrets} onChange={setSecrets} secret />
        <p class="hint">Secret values are sealed by the service and redacted from every output; they are never shown again.</p>
        <button type="submit" disabled={busy}>
          Run
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </section>
  );
}
