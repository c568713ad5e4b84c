// The S3 servers a replica's tests sync with, none of them the test process itself: Ceph's RADOS
// Gateway (rgw.ts: a cluster of one monitor and three OSDs on loopback, started for the file) and
// `swbucket serve --dialect s3` in a process of its own (serve.ts).
import { startRgw } from './rgw.ts';
import { serve } from './serve.ts';

export interface Remote {
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** What to show when a test fails: the remote's log. */
  log(): string;
  stop(): Promise<void>;
}

export async function rgwRemote(): Promise<Remote> {
  const rgw = await startRgw();
  return {
    endpoint: rgw.endpoint,
    credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    log: () => rgw.logTail('client.rgw.log', 20),
    stop: () => rgw.stop(),
  };
}

export async function serveRemote(): Promise<Remote> {
  const served = await serve(['--dialect', 's3']);
  return {
    endpoint: served.url,
    credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' },
    log: () => served.output().slice(-2000),
    stop: () => served.stop(),
  };
}

/** Each remote, with how long its start may take: for describe.each. */
export const REMOTES: [name: string, start: () => Promise<Remote>, startMs: number][] = [
  ['Ceph RADOS Gateway (radosgw 16)', rgwRemote, 100_000],
  ['swbucket serve --dialect s3 (its own process)', serveRemote, 30_000],
];
