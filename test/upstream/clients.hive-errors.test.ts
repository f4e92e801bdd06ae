// test/clients.hive-errors.test.ts again, through a gateway in upstream mode in front of the embedded one (test/upstream/README.md).
process.env.GATEWAY_MODE = 'upstream';
await import('../clients.hive-errors.test.ts');
