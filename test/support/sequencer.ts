// The order files start in: within each group (vite.config.ts: sequence.groupOrder), the longest
// first, so that the two lanes end together instead of one running a long file alone at the end
// (a clean-clone run: 9 s of one lane idle at the end of the first group, 11 s at the second's).
// Vitest orders by the durations of its own last run, which a clean clone has not got, and
// otherwise by project name, keeping each project's files together. The hints below are seconds
// measured in a clean-clone run (the longest of the engines that run a file); a file not named is
// taken as short. They steer only the order: a stale one costs some seconds, never a result.
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { relative } from 'node:path';

const SECONDS: Record<string, number> = {
  'test/package/examples.test.ts': 52,
  'test/package/cli.test.ts': 42,
  'test/browser/engine-lifecycle.test.ts': 40,
  'test/package/react.test.ts': 38,
  'test/browser/engine-replica.test.ts': 36,
  'test/browser/engine-mount.test.ts': 32,
  'test/unit/replica-faults.test.ts': 30,
  'test/browser/console-objects.test.ts': 29,
  'test/unit/replica-model.test.ts': 26,
  'test/unit/conformance-http.test.ts': 23,
  'test/browser/conformance.test.ts': 22,
  'test/browser/lifecycle.test.ts': 22,
  'test/package/adopt.test.ts': 21,
  'test/browser/engine-data.test.ts': 20,
  'test/browser/archive.test.ts': 19,
  'test/unit/durable-server.test.ts': 18,
  'test/unit/api-docs.test.ts': 17,
  'test/unit/objects.test.ts': 17,
  'test/browser/client.test.ts': 17,
  'test/package/replica.test.ts': 17,
  'test/browser/engine-offline.test.ts': 16,
  'test/browser/upload.test.ts': 15,
  'test/browser/console-screens.test.ts': 14,
  'test/browser/replica-devices.test.ts': 12,
  'test/unit/conformance.test.ts': 12,
  'test/browser/engines.test.ts': 11,
  'test/browser/console-log.test.ts': 11,
  'test/unit/quota.test.ts': 11,
  'test/unit/multipart.test.ts': 11,
  'test/browser/start-options.test.ts': 11,
  'test/browser/console-admin.test.ts': 10,
  'test/unit/replica-remotes.test.ts': 10,
  'test/unit/s3-python.test.ts': 10,
};

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const seconds = (f: TestSpecification) => SECONDS[relative(root, f.moduleId).split('\\').join('/')] ?? 1;
    return [...files].sort((a, b) =>
      a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder
      || seconds(b) - seconds(a)
      || a.project.name.localeCompare(b.project.name)
      || a.moduleId.localeCompare(b.moduleId));
  }
}
