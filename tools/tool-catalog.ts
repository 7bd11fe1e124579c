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

  /** Removes `tool` if it is the one held under its id (a later tool with that id is kept). */
  remove(tool: Tool): void {
    if (this.byId.get(tool.id) === tool) this.byId.delete(tool.id);
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

  /**
   * The `tool_schemas.json` document (docs/tool-boundary.md §Catalog): one entry per tool, with
   * Goa-AI's field names where Goa-AI has the field (its toolsets guide, "Generated Specs and
   * tool_schemas.json": `id`, `service`, `toolset`, `title`, `description`, `tags`,
   * `payload.schema`, `result.schema`) and toolwarden's own for the rest (`confirmation`,
   * `external`). `service` is the agent (or gateway) the catalog belongs to.
   */
  schemas(service: string, include: (tool: Tool) => boolean = () => true): ToolSchemas {
    return {
      tools: this.list()
        .filter(include)
        .map((tool) => toolSchemaEntry(tool, service)),
    };
  }
}

/** The `tool_schemas.json` document: `{ tools: [...] }` (see {@link ToolCatalog.schemas}). */
export interface ToolSchemas {
  tools: ToolSchemaEntry[];
}

/**
 * One tool of `tool_schemas.json`:
 *
 * | field | Goa-AI | toolwarden |
 * |---|---|---|
 * | `id` | `"<service>.<toolset>.<tool>"` | the tool id, `"<toolset>.<tool>"` (the service is its own field) |
 * | `service` | the Goa service | the agent id (the gateway's agent for `toolwarden catalog`) |
 * | `toolset` | the toolset | the id before its last `.` |
 * | `title` | the tool's title | `title` (an MCP tool's `title`), else the tool name in words |
 * | `description`, `tags` | same | same |
 * | `payload.schema` | JSON Schema of the payload | the model-facing input schema (injected fields left out) |
 * | `result.schema` | JSON Schema of the result | the output schema, when the tool declares one |
 * | `confirmation` | — | `{ required }`: the run asks for approval before each call |
 * | `external` | — | true for a tool without `execute` (the app runs its calls) |
 */
export interface ToolSchemaEntry {
  id: string;
  service: string;
  toolset: string;
  title: string;
  description: string;
  tags: string[];
  payload: { schema: JSONSchema };
  result?: { schema: JSONSchema };
  confirmation: { required: boolean };
  external?: true;
}

function toolSchemaEntry(tool: Tool, service: string): ToolSchemaEntry {
  const cut = tool.id.lastIndexOf('.');
  return {
    id: tool.id,
    service,
    toolset: tool.id.slice(0, cut),
    title: tool.title ?? titleOf(tool.id.slice(cut + 1)),
    description: tool.description,
    tags: tool.tags ?? [],
    payload: { schema: tool.inputSchema },
    ...(tool.outputSchema === undefined ? {} : { result: { schema: tool.outputSchema } }),
    confirmation: { required: tool.requiresConfirmation === true },
    ...(tool.execute === undefined ? { external: true as const } : {}),
  };
}

/** `read_text_file` → `Read text file`. */
function titleOf(name: string): string {
  const words = name.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
