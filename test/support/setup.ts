// Node has no IndexedDB: fake-indexeddb provides the globals idb checks against (IDBRequest,
// IDBKeyRange…). Each test still opens its own IDBFactory, so tests never share data.
import 'fake-indexeddb/auto';
