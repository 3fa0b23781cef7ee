import { useEffect, useMemo, useState } from 'preact/hooks';
import { CreateTaskPage } from './pages/create-task-page';
import { HistoryPage } from './pages/history-page';
import { SchedulesPage } from './pages/schedules-page';
import { SignInPage } from './pages/sign-in-page';
import { TaskListPage } from './pages/task-list-page';
import { TaskPage } from './pages/task-page';
import { hrefOf, parseRoute } from './route';
import { clientFor, forgetApiKey, saveApiKey, savedApiKey } from './session';

/** The shell: sign-in until a key is known, then the page the URL's hash names. */
export function App() {
  const [apiKey, setApiKey] = useState(savedApiKey);
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const client = useMemo(() => (apiKey ? clientFor(apiKey) : undefined), [apiKey]);

  if (!client) {
    return (
      <SignInPage
        onSignedIn={(key) => {
          saveApiKey(key);
          setApiKey(key);
        }}
      />
    );
  }
  return (
    <>
      <header class="top">
        <a class="brand" href={hrefOf({ page: 'list' })}>
          Agentic tasks
        </a>
        <nav>
          <a href={hrefOf({ page: 'list' })}>Tasks</a>
          <a href={hrefOf({ page: 'new' })}>New task</a>
          <a href={hrefOf({ page: 'schedules' })}>Schedules</a>
          <button
            type="button"
            class="link"
            onClick={() => {
              forgetApiKey();
              setApiKey(null);
            }}
          >
            Sign out
          </button>
        </nav>
      </header>
      <main>
        {route.page === 'list' && <TaskListPage client={client} />}
        {route.page === 'new' && <CreateTaskPage client={client} />}
        {route.page === 'schedules' && <SchedulesPage client={client} />}
        {route.page === 'task' && <TaskPage key={route.id} client={client} taskId={route.id} />}
        {route.page === 'history' && <HistoryPage key={route.id} client={client} taskId={route.id} />}
      </main>
    </>
  );
}
