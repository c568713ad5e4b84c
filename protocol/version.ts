// The package version, settled when the package is built (bundlers inline it from package.json):
// the page and the worker compare theirs, so nothing for an adopter to define.
import { version } from '../package.json';

export const VERSION: string = version;
