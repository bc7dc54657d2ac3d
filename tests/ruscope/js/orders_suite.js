// A JavaScript application's test run against a ruscope emulator, through the official @azure/cosmos SDK:
// what `ruscope check --from-emulator` judges from the emulator's request log (tests/ruscope/test_check_from_emulator.py).
// Usage: node orders_suite.js ENDPOINT KEY TAG pinned|unpinned
const { CosmosClient } = require("@azure/cosmos");

const OPEN_ORDERS = "SELECT c.id, c.total FROM c WHERE c.status = @s";

async function main() {
  const [endpoint, key, tag, variant] = process.argv.slice(2);
  // The tag names this run in the request log; nothing else of the application changes.
  const client = new CosmosClient({ endpoint, key, defaultHeaders: { "x-ruscope-tag": tag } });
  const { database } = await client.databases.createIfNotExists({ id: "jsshop" });
  const { container } = await database.containers.createIfNotExists({
    id: "orders",
    partitionKey: { paths: ["/tenantId"] }, // no version: the SDK default, V1 hashing
    throughput: 12000,
  });
  const { resources: existing } = await container.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll();
  if (existing[0] === 0) {
    for (let n = 0; n < 120; n++) {
      await container.items.create({ id: `o${n}`, tenantId: `t${n % 6}`, total: n % 50, status: n % 2 ? "open" : "paid" });
    }
  }
  const spec = { query: OPEN_ORDERS, parameters: [{ name: "@s", value: "open" }] };
  const options = variant === "pinned" ? { partitionKey: "t3" } : {};
  for (let repeat = 0; repeat < 3; repeat++) {
    const { resources } = await container.items.query(spec, options).fetchAll();
    if (resources.length === 0) throw new Error("no open orders");
  }
  await container.item("o3", "t3").read();
  console.log("suite passed");
}

main().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
