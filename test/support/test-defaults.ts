// The environment every test gateway starts with (in this process or as a child) unless its
// test sets otherwise.

/**
 * What every test gateway runs with unless its test says otherwise. A MongoDB read may wait
 * 120 s (production: 10 s): FerretDB v1, the MongoDB-wire server of these tests, scans every
 * document for every find, so its speed is the machine's, and a read deadline that it
 * meets on one machine cut 28 searches on a slower one. The tests that are about the
 * deadline set their own (e2e.faults: 3 s, behind a proxy that stalls). For the same reason a
 * child gateway waits up to 120 s (production: 30 s) for MongoDB to answer at start; the
 * tests about that wait set their own (start-up.failures: 2 s).
 * Tests read /metrics to watch what a gateway does, often many times a second: its per-address
 * limit on the main port (60 a minute) is off, but for the tests of that limit (http.metrics-port).
 */
export const TEST_DEFAULTS: Readonly<Record<string, string>> = {
  BCRYPT_COST: '4',
  MONGODB_READ_TIMEOUT_MS: '120000',
  MONGODB_START_TIMEOUT_MS: '120000',
  METRICS_RATE_LIMIT_PER_IP_PER_MINUTE: '0',
};
