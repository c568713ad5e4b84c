// The service's size, count and time limits in one place (docs/protocol.md, "Limits"). The
// bounds of account fields are checked in ops/accounts.ts, those of bucket names in protocol/address.ts.
import { MAX_VERSION_ID } from '../store/rules/objects.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

export const limits = {
  keyBytes: 1000,
  putObjectBytes: 100 * MiB,
  partBytes: 100 * MiB,
  partMinBytes: 16 * KiB,
  partNumberMax: 10000,
  userMetadataBytes: 2048,
  downloadNameBytes: 256,
  deleteObjects: 1000,
  deleteBodyBytes: 2 * MiB,
  /** Complete's part list: 10000 parts of ~100 bytes of XML each, with room for whitespace. */
  completeBodyBytes: 4 * MiB,
  /** Any other XML request body (ACL, versioning, account documents). */
  smallXmlBodyBytes: 64 * KiB,
  /** A form upload's fields before its file part (POST Object), part headers included, read before anything is authorised: S3's 20 KB. */
  formFieldsBytes: 20 * KiB,
  /** An archive's swbucket.json: metadata only, about 400 bytes per stored version. */
  archiveManifestBytes: 64 * MiB,
  maxKeysDefault: 100,
  maxKeysMax: 1000,
  maxPartsMax: 1000,
  maxUploadsMax: 1000,
  /** S3's ListBuckets page (max-buckets). */
  maxBucketsMax: 10000,
  clockSkewMs: 15 * 60 * 1000,
  /**
   * A version id is at most 15 digits wherever a request names one (?versionId, Delete Multiple),
   * and a bucket hands out no longer one (sw/store/rules/objects.ts, MAX_VERSION_ID): a write
   * that would need one is refused (issue 23, F6: an archive set a counter of 1e15, and every
   * later version was unreachable). An archive may bring any state a bucket can reach: versionIds
   * up to the largest, and a next version id one past it.
   */
  versionIdDigits: String(MAX_VERSION_ID).length,
} as const;
