// Headless Chromium for browser tests (Debian's /usr/bin/chromium, or CHROMIUM_PATH).
// Under CI a missing Chromium fails the suite; elsewhere the suite is skipped loudly.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { describe, it } from 'vitest';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export function browserSuite(name: string, fn: () => void) {
  if (existsSync(CHROMIUM)) return describe(name, fn);
  const message = `${CHROMIUM} not found: suite "${name}"`;
  if (process.env.CI) {
    describe(name, () => {
      it('needs Chromium', () => {
        throw new Error(`CI: ${message} (install Debian's chromium package)`);
      });
    });
    return;
  }
  console.warn(`\n!!! SKIPPED: ${message}\n`);
  describe.skip(name, fn);
}

/** `extraArgs`: more Chromium switches (e.g. --host-resolver-rules to point a DNS name at loopback). */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}
