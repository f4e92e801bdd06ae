// Just enough DOM building for plain TypeScript pages: elements with properties and children,
// labelled inputs, and an error line that shows the gateway's error code.
import { RequestFailed } from './client';

type Child = Node | string | null | undefined | false;
type Props<K extends keyof HTMLElementTagNameMap> = Partial<Omit<HTMLElementTagNameMap[K], 'children' | 'style'>>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props<K> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = Object.assign(document.createElement(tag), props);
  for (const child of children) if (child !== null && child !== undefined && child !== false) element.append(child);
  return element;
}

/** An input inside its label, so that screen readers (and tests) find it by the label's text. */
export function field(label: string, input: HTMLInputElement | HTMLSelectElement): HTMLLabelElement {
  return h('label', {}, h('span', {}, label), input);
}

/** "message (CODE)" for each GraphQL error, or the message of anything else thrown. */
export function describeError(error: unknown): string {
  if (error instanceof RequestFailed) {
    return error.errors.map((e) => (e.extensions?.code ? `${e.message} (${e.extensions.code})` : e.message)).join('; ');
  }
  return error instanceof Error ? error.message : String(error);
}

export function errorLine(error: unknown): HTMLParagraphElement {
  return h('p', { className: 'error', role: 'alert', textContent: describeError(error) });
}

/**
 * Wires a form: on submit the button is disabled while `action` runs, and a failure is shown
 * as an error line above the button instead of being lost in the console.
 */
export function onSubmit(form: HTMLFormElement, action: () => Promise<void>): void {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const button = form.querySelector('button');
    form.querySelector('.error')?.remove();
    if (button) button.disabled = true;
    action()
      .catch((error: unknown) => form.insertBefore(errorLine(error), button))
      .finally(() => {
        if (button) button.disabled = false;
      });
  });
}
