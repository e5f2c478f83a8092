import { AppError } from '../../../domain/errors.js';
import type { LlmMessage, LlmRequest } from '../../../domain/llm.js';

/**
 * The bytes of one node's conversation (MAX_CONVERSATION_BYTES, docs/design.md#security): every follow-up request
 * of a tool or retrieval loop resends all of it, so its size is a cost paid on every turn, and a
 * loop that keeps reading large results must end. Past the limit the node fails with
 * CONVERSATION_TOO_LARGE before the request is sent (no forced final answer: that would be one more
 * request, the largest of the loop). Counted once at the first follow-up, then turn by turn.
 */
export class ConversationSize {
  private bytes: number | undefined;

  constructor(
    private readonly node: string,
    private readonly limit: number,
  ) {}

  /** Call before `added` joins `request.messages`; throws when the conversation would pass the limit. */
  grow(request: LlmRequest, added: readonly LlmMessage[]): void {
    this.bytes ??= Buffer.byteLength(request.system ?? '') + messagesBytes(request.messages);
    this.bytes += messagesBytes(added);
    if (this.bytes <= this.limit) return;
    throw new AppError(
      'CONVERSATION_TOO_LARGE',
      `node "${this.node}": its conversation reached ${this.bytes} bytes; one node's conversation may have at ` +
        `most ${this.limit} (MAX_CONVERSATION_BYTES)`,
    );
  }
}

function messagesBytes(messages: readonly LlmMessage[]): number {
  let bytes = 0;
  for (const { content } of messages) {
    if (typeof content === 'string') {
      bytes += Buffer.byteLength(content);
      continue;
    }
    for (const block of content) {
      if (block.type === 'text') bytes += Buffer.byteLength(block.text);
      else if (block.type === 'tool_result') bytes += Buffer.byteLength(block.content);
      else bytes += Buffer.byteLength(block.name) + Buffer.byteLength(JSON.stringify(block.input) ?? '');
    }
  }
  return bytes;
}
