// Drives `relmem serve` with the official MCP TypeScript SDK: lists the tools, calls each with valid and invalid
// arguments (the SDK checks every structured result against the tool's outputSchema), reads a resource, and answers
// the server's sampling requests as the client's LLM.
//
//   node check_server.mjs stdio <python> <dbs> <memory>
//   node check_server.mjs http <url>
//
// Prints one JSON line with what it checked; exits non-zero on the first failed check.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

const LA_QUESTION = "What is the average rating of Italian restaurants in Los Angeles?";
const LA_SQL = "SELECT AVG(rating) FROM restaurant WHERE food_type = 'Italian' AND city = 'Los Angeles'";
const STAGE_REPLIES = {
  context_switch: "Reasoning: this needs stored records.\nAnswer: (YES)",
  plan: `Goal: average rating\nBegin SQL\n${LA_SQL}\nEnd SQL\nDatabase: restaurants`,
  correct_values: `Begin SQL\n${LA_SQL.replace("'Los Angeles'", "'LA'")}\nEnd SQL`,
  return_type: "Return type: (SQL)",
};

function transport() {
  const [kind, ...rest] = process.argv.slice(2);
  if (kind === "stdio") {
    const [python, dbs, memory] = rest;
    return new StdioClientTransport({
      command: python,
      args: ["-m", "relmem.cli", "serve", "--dbs", dbs, "--memory", memory, "--timeout", "2"],
      env: process.env,
      stderr: "inherit",
    });
  }
  if (kind === "http") return new StreamableHTTPClientTransport(new URL(rest[0]));
  throw new Error("usage: node check_server.mjs stdio PYTHON DBS MEMORY | http URL");
}

const client = new Client({ name: "relmem-sdk-check", version: "1.0.0" }, { capabilities: { sampling: {} } });
const sampled = [];
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  const stage = request.params.metadata?.relmem_stage ?? "";
  sampled.push(stage);
  return {
    role: "assistant",
    content: { type: "text", text: STAGE_REPLIES[stage] ?? "(YES)" },
    model: "scripted-test-llm",
    stopReason: "endTurn",
  };
});

async function structured(name, args) {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.isError ?? false, false, `${name}: ${JSON.stringify(result.content)}`);
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  return result.structuredContent;
}

async function toolError(name, args) {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.isError, true, `${name} accepted ${JSON.stringify(args)}`);
  return result.content[0].text;
}

await client.connect(transport());
const checks = {};
assert.equal(client.getServerVersion().name, "relmem");
assert.ok(client.getServerCapabilities().tools && client.getServerCapabilities().resources);

const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name).sort(), ["ask", "check_sql", "describe_database", "find_values",
  "link_values", "list_databases", "run_sql", "select_databases"]);
assert.ok(tools.every((t) => t.outputSchema?.type === "object" && t.inputSchema.type === "object"));
checks.tools = tools.length;

const listing = await structured("list_databases", {});
assert.equal(listing.count, 7);
const described = await structured("describe_database", { database: "restaurants" });
assert.match(described.ddl, /CREATE TABLE "restaurant"/);
const selected = await structured("select_databases", { question: LA_QUESTION, k: 3 });
assert.equal(selected.ranking[0].database, "restaurants");
const found = await structured("find_values", { database: "restaurants", text: "Los Angeles", table: "restaurant",
  column: "city", k: 3 });
assert.equal(found.matches[0].value, "LA");
const linked = await structured("link_values", { database: "restaurants", question: LA_QUESTION });
assert.ok(linked.links.some((l) => l.value === "LA" && l.span === "Los Angeles"));
const checked = await structured("check_sql", { database: "restaurants", sql: LA_SQL });
assert.equal(checked.ok, false);
assert.equal(checked.value_checks.find((c) => c.status === "not_found").similar[0].value, "LA");
const rows = await structured("run_sql", { database: "restaurants", sql: "SELECT count(*) FROM restaurant" });
assert.deepEqual(rows.rows, [[120]]);
checks.valid_calls = 7;

const refusals = [
  ["list_databases", { path: "/etc" }, /unknown property 'path'/],
  ["describe_database", { database: "../../etc/passwd" }, /unknown database/],
  ["select_databases", { question: 42 }, /must be string/],
  ["find_values", { database: "restaurants" }, /missing the required property 'text'/],
  ["link_values", { database: "restaurants", question: "x", k: -1 }, /must be >= 1/],
  ["check_sql", { database: "restaurants", sql: null }, /must be string, not null/],
  ["run_sql", { database: "restaurants", sql: "WITH x AS (SELECT 1) DELETE FROM restaurant" }, /refused/],
  ["run_sql", { database: "restaurants", sql: "SELECT 1; DROP TABLE restaurant" }, /refused/],
  ["ask", {}, /missing the required property 'question'/],
];
for (const [name, args, reason] of refusals) assert.match(await toolError(name, args), reason);
checks.invalid_calls = refusals.length;

await assert.rejects(client.callTool({ name: "drop_everything", arguments: {} }),
  (error) => error instanceof McpError && error.code === -32602);
checks.unknown_tool = "rejected";

const { resources } = await client.listResources();
assert.equal(resources.length, 7);
const schema = await client.readResource({ uri: "relmem://restaurants/schema" });
assert.match(schema.contents[0].text, /restaurant/);
checks.resources = resources.length;

const answer = await structured("ask", { question: LA_QUESTION });
assert.equal(answer.llm, "sampling");
assert.match(answer.results[0].sql, /city = 'LA'/);
assert.ok(sampled.includes("plan"), `stages sampled: ${sampled}`);
checks.sampling = { stages: sampled, answer: answer.answer };

assert.deepEqual(await client.ping(), {});
await client.close();
console.log(JSON.stringify({ ok: true, checks }));
