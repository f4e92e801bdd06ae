// test/clients.apollo.test.ts again, through a gateway in upstream mode in front of the embedded one (test/upstream/README.md).
process.env.GATEWAY_MODE = 'upstream';
await import('../clients.apollo.test.ts');
