/**
 * The user message, built as groundswell does (DESIGN §3): the prompt text, a blank line, then one
 * `<key>\n<JSON, 2-space indented>\n</key>` block per data key, blocks separated by blank lines.
 */
export function buildUserMessage(user: string, data: Record<string, unknown> | undefined): string {
  if (!data) return user;
  const blocks: string[] = [];
  for (const [key, value] of Object.entries(data)) {
    blocks.push(`<${key}>\n${JSON.stringify(value, null, 2)}\n</${key}>`);
  }
  return blocks.length === 0 ? user : `${user}\n\n${blocks.join('\n\n')}`;
}
