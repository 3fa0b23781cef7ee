import { useState } from 'preact/hooks';
import { messageOf } from '../errors';
import { clientFor } from '../session';

/** Checks the key with one cheap authenticated call before keeping it. */
export function SignInPage({ onSignedIn }: { onSignedIn: (apiKey: string) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await clientFor(key.trim()).tasks.listPage({ limit: 1 });
      onSignedIn(key.trim());
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>Agentic task service</h1>
      <form onSubmit={(event) => void submit(event)}>
        <label>
          API key
          <input type="password" autoComplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
