// Two hash routes, #/account and #/users; anything else shows the account page.
import { renderAccount } from './account';
import { session } from './client';
import { renderUsers } from './users';
import './style.css';

const routes: Record<string, (root: HTMLElement) => Promise<void>> = {
  '#/account': renderAccount,
  '#/users': renderUsers,
};

const root = document.querySelector<HTMLElement>('#app')!;

function showSession(): void {
  document.querySelector('#signed-in')!.textContent = session.token() ? 'signed in' : 'not signed in';
}

function route(): void {
  const hash = location.hash in routes ? location.hash : '#/account';
  for (const link of document.querySelectorAll('nav a')) link.toggleAttribute('aria-current', link.getAttribute('href') === hash);
  root.replaceChildren();
  void routes[hash]!(root);
}

window.addEventListener('hashchange', route);
window.addEventListener('session-change', showSession);
showSession();
route();
