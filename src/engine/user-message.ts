/**
 * The user message, built as groundswell does (DESIGN §3): the prompt text, a blank line, then one
 * `<key>\n<JSON, 2-space indented>\n</key>` block per data key, blocks separated by blank lines.
 * A value is often untrusted — an earlier answer or a child's output through a template — so `<` is
 * escaped in its JSON as in a tool output: no value can close its block (`</key>`) and write outside.
 */
export function buildUserMessage(user: string, data: Record<string, unknown> | undefined): string {
  if (!data) return user;
  const blocks: string[] = [];
  for (const [key, value] of Object.entries(data)) {
    blocks.push(`<${key}>\n${JSON.stringify(value, null, 2).replace(/</g, '\\u003c')}\n</${key}>`);
  }
  return blocks.length === 0 ? user : `${user}\n\n${blocks.join('\n\n')}`;
}
