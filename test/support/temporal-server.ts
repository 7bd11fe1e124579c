import { connect } from 'node:net';

/**
 * The Temporal dev server the Temporal suites use (issue 14): `bash scripts/temporal.sh install &&
 * bash scripts/temporal.sh start` (and `.ci/run`) serve it on 127.0.0.1:7233 (`TEMPORAL_ADDRESS`
 * overrides). Suites skip with a message without it on a developer's machine; under CI=true they
 * are required.
 */
export const TEMPORAL_ADDRESS = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';

export async function probeTemporal(suite: string): Promise<{ available: boolean; required: boolean }> {
  const [host, port] = TEMPORAL_ADDRESS.split(':') as [string, string];
  const available = await new Promise<boolean>((resolve) => {
    const socket = connect({ host, port: Number(port) });
    socket.setTimeout(1_500);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
  const required = process.env.CI === 'true';
  if (!available && !required) {
    console.warn(
      `[skip] ${suite}: no Temporal server at ${TEMPORAL_ADDRESS}. Start one with: bash scripts/temporal.sh install && bash scripts/temporal.sh start`,
    );
  }
  return { available, required };
}

/**
 * A suite's connections to the dev server: a worker's `NativeConnection` and a client.
 *
 * @throws when the server is not there (only reached under CI=true: suites skip otherwise).
 */
export async function connectTemporal(available: boolean) {
  if (!available)
    throw new Error(`No Temporal server at ${TEMPORAL_ADDRESS} and CI=true: bash scripts/temporal.sh start`);
  const { NativeConnection } = await import('@temporalio/worker');
  const { Client, Connection } = await import('@temporalio/client');
  const connection = await NativeConnection.connect({ address: TEMPORAL_ADDRESS });
  const client = new Client({ connection: await Connection.connect({ address: TEMPORAL_ADDRESS }) });
  const close = async () => {
    await connection.close();
    await client.connection.close();
  };
  return { connection, client, close };
}
