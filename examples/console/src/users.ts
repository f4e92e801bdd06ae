// Users page: search the organization's users, page through the results with the
// connection's cursors, and open a user's history (needs user.read, e.g. ORG_USER_VIEWER).
import { request } from './client';
import { errorLine, field, h } from './dom';
import { getFragmentData, graphql, type FragmentType } from './gql';
import type { UserFilter } from './gql/graphql';
import { renderHistory } from './history';

const UserRow = graphql(`
  fragment UserRow on User {
    id
    username
    state
    profile {
      displayName
    }
    email {
      email
      isVerified
    }
  }
`);

const SearchUsers = graphql(`
  query SearchUsers($filter: UserFilter, $first: Int, $after: String, $last: Int, $before: String) {
    users(filter: $filter, first: $first, after: $after, last: $last, before: $before) {
      totalCount
      edges {
        node {
          ...UserRow
        }
      }
      pageInfo {
        hasNextPage
        hasPreviousPage
        startCursor
        endCursor
      }
    }
  }
`);

type Page = { after?: string; before?: string };

const filters: Record<string, (text: string) => UserFilter> = {
  'Username contains': (text) => ({ username: { op: 'CONTAINS', value: text } }),
  'Email contains': (text) => ({ email: { op: 'CONTAINS', value: text } }),
  'Last name starts with': (text) => ({ lastNamePrefix: text }),
};

export async function renderUsers(root: HTMLElement): Promise<void> {
  const text = h('input', { type: 'search', name: 'q' });
  const by = h('select', { name: 'by' }, ...Object.keys(filters).map((label) => h('option', { value: label, textContent: label })));
  const size = h('input', { type: 'number', name: 'size', min: '1', max: '100', value: '10' });
  const form = h(
    'form',
    { id: 'search' },
    field('Search', text),
    field('Match', by),
    field('Page size', size),
    h('button', { type: 'submit', textContent: 'Search' }),
  );
  const results = h('section', { id: 'results' });
  const history = h('section', { id: 'history' });
  root.replaceChildren(h('h1', { textContent: 'Users' }), form, results, history);

  let pageNumber = 1;
  let latest = 0;
  const show = async (page: Page, step = 0) => {
    // Only the newest request may draw: an older answer arriving late would show stale rows.
    const ticket = ++latest;
    pageNumber = step === 0 ? 1 : pageNumber + step;
    const filter = text.value.trim() ? filters[by.value]!(text.value.trim()) : null;
    const count = Number(size.value) || 10;
    // Backward pages ask for the last `count` before the cursor, forward ones the first after it.
    const paging = page.before ? { last: count, before: page.before } : { first: count, after: page.after ?? null };
    try {
      const { users } = await request(SearchUsers, { filter, ...paging });
      if (ticket !== latest) return;
      results.replaceChildren(...resultList(users, pageNumber, (next, nextStep) => void show(next, nextStep), history));
    } catch (error) {
      if (ticket === latest) results.replaceChildren(errorLine(error));
    }
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void show({});
  });
  await show({});
}

interface Connection {
  totalCount: number;
  edges: { node: FragmentType<typeof UserRow> }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor?: string | null; endCursor?: string | null };
}

function resultList(users: Connection, pageNumber: number, go: (page: Page, step: number) => void, history: HTMLElement): HTMLElement[] {
  const rows = users.edges.map((edge) => userRow(getFragmentData(UserRow, edge.node), history));
  const { pageInfo } = users;
  const pageButton = (label: string, enabled: boolean, page: Page, step: number) => {
    const button = h('button', { type: 'button', textContent: label, disabled: !enabled });
    button.addEventListener('click', () => go(page, step));
    return button;
  };
  return [
    h('p', {
      id: 'result-count',
      textContent: `${users.totalCount === 1 ? '1 user matches' : `${users.totalCount} users match`}. Page ${pageNumber}.`,
    }),
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, ...['Username', 'Display name', 'Email', 'State', ''].map((t) => h('th', { textContent: t })))),
      h('tbody', {}, ...rows),
    ),
    h(
      'nav',
      { className: 'pager' },
      pageButton('Previous page', pageInfo.hasPreviousPage && !!pageInfo.startCursor, { before: pageInfo.startCursor ?? undefined }, -1),
      pageButton('Next page', pageInfo.hasNextPage && !!pageInfo.endCursor, { after: pageInfo.endCursor ?? undefined }, 1),
    ),
  ];
}

function userRow(
  user: {
    id: string;
    username: string;
    state: string;
    profile: { displayName?: string | null };
    email: { email: string; isVerified: boolean };
  },
  history: HTMLElement,
) {
  const open = h('button', { type: 'button', textContent: 'History', ariaLabel: `History of ${user.username}` });
  open.addEventListener('click', () => void renderHistory(history, user.id));
  return h(
    'tr',
    {},
    h('td', { textContent: user.username }),
    h('td', { textContent: user.profile.displayName ?? '' }),
    h('td', { textContent: `${user.email.email}${user.email.isVerified ? ' ✓' : ''}` }),
    h('td', { textContent: user.state.replace('USER_STATE_', '').toLowerCase() }),
    h('td', {}, open),
  );
}
