// Reading the service's XML answers. Loaded on the first answer that has one (client.ts imports it
// lazily): the parser is most of the client's weight, and many pages never list anything.
import { XMLParser } from 'fast-xml-parser';

const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  processEntities: true,
  // Also decodes numeric references: the service writes a CR in a key as &#13;.
  htmlEntities: true,
  isArray: (name) => ['Contents', 'CommonPrefixes', 'Bucket', 'Version', 'Part', 'Upload', 'Account', 'Deleted', 'Error'].includes(name),
});

export const parseXml = (text: string): unknown => parser.parse(text);
