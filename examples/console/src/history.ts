// A user's history on the users page: its events newest first, with who made each change and
// what it set, 20 at a time.
import { request } from './client';
import { errorLine, h } from './dom';
import { getFragmentData, graphql } from './gql';

const HistoryEventItem = graphql(`
  fragment HistoryEventItem on HistoryEvent {
    type
    createdAt
    sequence
    editorId
    editor {
      username
    }
    changes {
      field
      value
    }
  }
`);

const UserHistory = graphql(`
  query UserHistory($id: ID!, $after: String) {
    user(id: $id) {
      id
      username
      history(first: 20, after: $after) {
        totalCount
        edges {
          node {
            ...HistoryEventItem
          }
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
`);

export async function renderHistory(target: HTMLElement, userId: string): Promise<void> {
  const list = h('ol', { className: 'events' });
  const more = h('button', { type: 'button', textContent: 'Older events', hidden: true });
  const load = async (after: string | null) => {
    try {
      const { user } = await request(UserHistory, { id: userId, after });
      if (!user?.history) throw new Error('This user or its history is not visible to you');
      if (!after) {
        target.replaceChildren(
          h('h2', { textContent: `History of ${user.username}` }),
          h('p', { textContent: `${user.history.totalCount} events` }),
          list,
          more,
        );
      }
      list.append(...user.history.edges.map((edge) => eventItem(getFragmentData(HistoryEventItem, edge.node))));
      const { hasNextPage, endCursor } = user.history.pageInfo;
      more.hidden = !hasNextPage;
      more.onclick = () => void load(endCursor ?? null);
    } catch (error) {
      target.replaceChildren(errorLine(error));
    }
  };
  await load(null);
}

function eventItem(event: {
  type: string;
  createdAt: string;
  editorId: string;
  editor?: { username: string } | null;
  changes: { field: string; value?: string | null }[];
}) {
  const when = new Date(event.createdAt).toLocaleString();
  const who = event.editor?.username ?? event.editorId;
  const changes = event.changes.map((c) => h('li', { textContent: `${c.field}: ${c.value ?? '(set)'}` }));
  return h('li', { className: 'event' }, h('strong', { textContent: event.type }), ` by ${who} at ${when}`, h('ul', {}, ...changes));
}
