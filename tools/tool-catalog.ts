import type { JSONSchema, Tool } from './define-tool.ts';
import { ToolDefinitionError } from './define-tool.ts';

/** What a planner is shown of a tool (docs/architecture.md `ToolDescriptor`). */
export interface ToolDescriptor {
  name: string;
  description: string;
  inputSchema: JSONSchema;
  /** The tool has no `execute`: the app runs its calls while the run awaits (`awaiting.externalTools`). */
  external?: true;
}

/**
 * The tools of a runtime by id (docs/tool-boundary.md "tool catalog"): lookup, descriptors for the planner and
 * the `tool_schemas.json` export.
 */
export class ToolCatalog {
  private readonly byId = new Map<string, Tool>();

  /** @throws ToolDefinitionError when two tools share an id. */
  constructor(tools: Iterable<Tool> = []) {
    for (const tool of tools) this.add(tool);
  }

  add(tool: Tool): void {
    if (this.byId.has(tool.id)) throw new ToolDefinitionError(`Duplicate tool id "${tool.id}"`);
    this.byId.set(tool.id, tool);
  }

  get(id: string): Tool | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  get ids(): string[] {
    return [...this.byId.keys()];
  }

  list(): Tool[] {
    return [...this.byId.values()];
  }

  /** Descriptors of the tools `include` admits, in registration order. */
  descriptors(include: (tool: Tool) => boolean = () => true): ToolDescriptor[] {
    return this.list()
      .filter(include)
      .map((tool) =>
        tool.execute === undefined
          ? {
              name: tool.id,
              description: tool.description,
              inputSchema: tool.inputSchema,
              external: true as const,
            }
          : { name: tool.id, description: tool.description, inputSchema: tool.inputSchema },
      );
  }

  /** The `tool_schemas.json` document: every tool's input and output JSON Schema, by id. */
  schemas(): Record<
    string,
    { description: string; input: JSONSchema; output?: JSONSchema; tags?: string[] }
  > {
    return Object.fromEntries(
      this.list().map((tool) => [
        tool.id,
        {
          description: tool.description,
          input: tool.inputSchema,
          output: tool.outputSchema,
          tags: tool.tags,
        },
      ]),
    );
  }
}
