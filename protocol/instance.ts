// The defaults a page and a worker must agree on, and one name from which every per-instance
// resource derives, so two apps (or two instances) on one origin share neither data nor log.

export const DEFAULT_ENDPOINT = 'svc.localhost';

/** The dialects the service speaks (sw/core/dialect.ts): its own, NetEase NOS's, and S3's. */
export type DialectName = 'svc' | 'nos' | 's3';

/** Each dialect's service host; bucket hosts are `{bucket}.{host}`. */
export type Endpoints = Record<DialectName, string>;

export const DEFAULT_ENDPOINTS: Endpoints = { svc: DEFAULT_ENDPOINT, nos: 'nos.localhost', s3: 's3.localhost' };
export const DEFAULT_NAME = 'swbucket';
/** The mount, relative to the worker's scope: `/svc/` at the root, `/demo/svc/` under `/demo/`. */
export const DEFAULT_MOUNT_PATH = 'svc/';
/** Where, under the worker's scope, the worker says who it is (startService asks it). */
export const HELLO_PATH = '__swbucket';

/** The root account every new store starts with (docs/protocol.md, "Accounts"). */
export const ROOT_CREDENTIALS = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } as const;

export interface InstanceNames {
  /** The IndexedDB database of buckets, objects, uploads and accounts. */
  database: string;
  /** The request log's own database. */
  logDatabase: string;
  /** The BroadcastChannel on which the worker announces each logged request. */
  logChannel: string;
  /** The BroadcastChannel on which the worker announces its replicas' status, progress and conflicts. */
  replicaChannel: string;
}

const VALID_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function instanceNames(name: string = DEFAULT_NAME): InstanceNames {
  if (!VALID_NAME.test(name)) {
    throw new TypeError(`swbucket: the instance name "${name}" must be 1–64 characters of A-Z a-z 0-9 . _ - (starting with a letter or digit).`);
  }
  return { database: name, logDatabase: `${name}-log`, logChannel: `${name}-log`, replicaChannel: `${name}-replicas` };
}

/** Where pages ask the worker about its replicas (POST, JSON: sw/fetch-handler.ts): beside HELLO_PATH. */
export const REPLICAS_PATH = `${HELLO_PATH}/replicas`;

/**
 * What the worker posts on the replica channel when a round needs credentials no page has handed
 * it (a worker started again has lost them, or they are about to expire): `{ type, bucket }`. Pages
 * that bound the replica with getCredentials() answer with fresh ones.
 */
export const CREDENTIALS_NEEDED = 'credentials-needed';

/**
 * What the worker posts on the replica channel when a replica's policy is a function in a page:
 * `{ type, bucket, id, conflict }`. A page that holds it says so at once (op 'deciding'), then
 * answers (op 'decide').
 */
export const DECISION_NEEDED = 'decision-needed';

/** How long a conflict waits for a page to take it up; none did: no page holds the function, and the key waits for a later round. */
export const DECISION_WAIT_MS = 5_000;

/** How long a page that took a conflict up has to decide it; undecided then, the key waits for a later round. */
export const DECISION_MAX_MS = 120_000;

/** How long a round waits for a page to answer CREDENTIALS_NEEDED before it stops, saying why. */
export const CREDENTIALS_WAIT_MS = 5_000;

/** Credentials that expire within this long are asked for again before a round uses them. */
export const CREDENTIALS_MARGIN_MS = 60_000;

/** Whether temporary credentials expire within CREDENTIALS_MARGIN_MS. */
export const expiringSoon = (c: { expiration?: number | Date }, now = Date.now()): boolean =>
  c.expiration !== undefined && new Date(c.expiration).getTime() - now < CREDENTIALS_MARGIN_MS;

/** The Background Sync tag (Chromium) under which the worker asks to be woken once online, to sync its replicas. */
export const REPLICA_SYNC_TAG = 'swbucket-replicas';

/** The first bytes of every worker swbucket ships (scripts/bundles.ts writes them): how init and startService() tell it from an app's own. */
export const WORKER_BANNER = '/* swbucket ';

/**
 * What startService() posts to swbucket's worker once it controls the page, with the URLs of the
 * page and the files it loaded: `{ type: SHELL_MESSAGE, urls }`, kept for offline use (sw/shell.ts).
 */
export const SHELL_MESSAGE = 'swbucket:keep';

/** What startService() posts to an active worker that does not control its page: swbucket's own worker then claims it. */
export const CLAIM_MESSAGE = 'swbucket:claim';

/** What the worker answers at HELLO_PATH. */
export interface WorkerHello {
  swbucket: string;
  /** SVC's service host (`endpoints.svc`). */
  endpoint: string;
  /** Every dialect's service host; absent from a worker older than the dialects. */
  endpoints?: Endpoints;
  mount: string;
  name: string;
  /**
   * How the worker's store keeps bodies: as Blobs, or as pieces where this browser's IndexedDB
   * refuses Blobs (WebKit with ephemeral storage, as in Safari's private windows). Absent when the
   * store could not be opened, or from a worker older than 0.1.0's engine report.
   */
  bodies?: 'blobs' | 'pieces';
  /** False where the worker's requests have no `body` stream (Firefox): bodies are read whole with blob() first. */
  requestBodyStream?: boolean;
}
