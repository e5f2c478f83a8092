/** One SSE frame as a client sees it. */
export interface SseEvent {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/** An incremental SSE parser (the subset the service speaks): frames end at a blank line. */
export class SseParser {
  readonly events: SseEvent[] = [];
  comments = 0;
  private buffer = '';

  push(text: string): SseEvent[] {
    this.buffer += text.replace(/\r\n?/g, '\n');
    const parsed: SseEvent[] = [];
    let end = this.buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: SseEvent = { id: undefined, event: undefined, data: '' };
      let hasField = false;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments++;
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') event.id = value;
        else if (field === 'event') event.event = value;
        else if (field === 'data') data.push(value);
        else continue;
        hasField = true;
      }
      if (hasField) {
        event.data = data.join('\n');
        parsed.push(event);
        this.events.push(event);
      }
      end = this.buffer.indexOf('\n\n');
    }
    return parsed;
  }

  get rest(): string {
    return this.buffer;
  }
}
