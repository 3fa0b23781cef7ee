// Routes live in the URL's hash (#/tasks/<id>), so the server serves one page for all of them.

export type Route =
  | { readonly page: 'list' }
  | { readonly page: 'new' }
  | { readonly page: 'schedules' }
  | { readonly page: 'task'; readonly id: string }
  | { readonly page: 'history'; readonly id: string };

export function parseRoute(hash: string): Route {
  const [, first, id, view] = hash.replace(/^#/, '').split('/');
  if (first === 'new') return { page: 'new' };
  if (first === 'schedules') return { page: 'schedules' };
  if (first === 'tasks' && id) return view === 'history' ? { page: 'history', id } : { page: 'task', id };
  return { page: 'list' };
}

export const hrefOf = (route: Route): string => {
  switch (route.page) {
    case 'list':
      return '#/';
    case 'new':
      return '#/new';
    case 'schedules':
      return '#/schedules';
    case 'task':
      return `#/tasks/${encodeURIComponent(route.id)}`;
    case 'history':
      return `#/tasks/${encodeURIComponent(route.id)}/history`;
  }
};
