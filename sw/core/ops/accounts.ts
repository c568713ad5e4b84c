// Accounts (docs/protocol.md, "Accounts"): on the service host, signed by root only.
import { SvcError, fail } from '../errors.ts';
import { limits } from '../limits.ts';
import { requireCaller } from '../access.ts';
import { readXmlBody } from '../body.ts';
import { childText, parseXml, xmlResponse } from '../xml.ts';
import type { Context } from '../context.ts';

/** Safe inside `SVC {id}:{signature}` and in a URL query. */
const ACCESS_KEY_ID = /^[A-Za-z0-9._~-]{3,64}$/;

function requireRoot(ctx: Context): void {
  if (!requireCaller(ctx).root) throw new SvcError('AccessDenied', 'Only the root account may manage accounts.');
}

function accountIdOf(ctx: Context): string {
  const id = ctx.query.get('account') ?? '';
  if (!ACCESS_KEY_ID.test(id)) fail('InvalidArgument', 'The account id must be 3–64 characters of A-Z a-z 0-9 . _ ~ -.');
  return id;
}

export async function putAccount(ctx: Context): Promise<Response> {
  requireRoot(ctx);
  const accessKeyId = accountIdOf(ctx);
  const doc = parseXml(await readXmlBody(ctx, limits.smallXmlBodyBytes, false), 'Account');
  const existing = await ctx.store.getAccount(accessKeyId);
  const secret = childText(doc, 'SecretAccessKey') ?? existing?.secret;
  if (secret === undefined || secret.length < 8 || secret.length > 128 || /[^\x21-\x7e]/.test(secret)) {
    return fail('InvalidArgument', 'SecretAccessKey must be 8–128 printable ASCII characters without spaces.');
  }
  const displayName = childText(doc, 'DisplayName')?.trim() || existing?.displayName || accessKeyId;
  if (displayName.length > 256) fail('InvalidArgument', 'DisplayName may not exceed 256 characters.');
  const quotaText = childText(doc, 'QuotaBytes')?.trim();
  if (quotaText !== undefined && !/^\d{1,15}$/.test(quotaText)) fail('InvalidArgument', 'QuotaBytes must be a non-negative integer.');
  await ctx.store.putAccount({
    accessKeyId, secret, displayName, ...(quotaText !== undefined ? { quotaBytes: Number(quotaText) } : {}),
  });
  return new Response(null, { status: 200 });
}

export async function deleteAccount(ctx: Context): Promise<Response> {
  requireRoot(ctx);
  const result = await ctx.store.deleteAccount(accountIdOf(ctx));
  if (result === 'noSuchAccount') fail('NoSuchAccount', 'The account does not exist.');
  if (result === 'root') fail('InvalidArgument', 'The root account cannot be removed.');
  if (result === 'ownsBuckets') fail('AccountNotEmpty', 'The account still owns buckets; delete them first.');
  return new Response(null, { status: 200 });
}

export async function listAccounts(ctx: Context): Promise<Response> {
  requireRoot(ctx);
  const accounts = await ctx.store.listAccounts();
  return xmlResponse({
    ListAccountsResult: {
      Account: accounts.map((a) => ({
        AccessKeyId: a.accessKeyId,
        DisplayName: a.displayName,
        ...(a.quotaBytes !== undefined ? { QuotaBytes: a.quotaBytes } : {}),
        UsedBytes: a.usedBytes,
        Root: a.root === true,
      })),
    },
  });
}
