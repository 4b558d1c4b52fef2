#!/usr/bin/env node
// A shim in another language: drives `yunikorn-fsm serve` through the SI's
// gRPC service, loading the same si.proto the server is generated from.
//
//   node scenario.js --target 127.0.0.1:3333 [--token TOKEN] [--proto-dir DIR]
//
// It registers an RM, adds a node, an application and an ask, receives the
// allocations, releases one and receives the confirmation, then runs a gang
// through placeholder replacement, and checks its view against the core's
// state dump. Prints one JSON line with what it saw; exits 1 on any failure.
// tests/test_rpc_node.py runs it against a server on a free loopback port.
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

function parseArgs(argv) {
  const args = { target: '127.0.0.1:3333', token: null,
                 protoDir: path.join(__dirname, '..', '..', 'scheduler', 'rpc', 'proto') };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
    if (!(key in args)) throw new Error(`unknown option ${argv[i]}`);
    args[key] = argv[i + 1];
  }
  return args;
}

function load(protoDir) {
  // keepCase: the spec's field names (rmID, UUID, applicationID) as they are
  const definition = protoLoader.loadSync(['si.proto', 'yunikorn_fsm_ext.proto'], {
    includeDirs: [protoDir], keepCase: true, longs: Number, enums: String,
    defaults: true, oneofs: true,
  });
  return grpc.loadPackageDefinition(definition);
}

const CONFIG = `
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: apps
`;

// Everything one RM hears, per stream, and a way to wait for it.
class Inbox {
  constructor() { this.allocation = []; this.application = []; this.node = []; this.waiters = []; }
  push(kind, message) {
    this[kind].push(message);
    this.waiters = this.waiters.filter((w) => !w());
  }
  until(what, check, ms = 10000) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
      const done = () => {
        const value = check(this);
        if (value) { clearTimeout(timer); resolve(value); return true; }
        return false;
      };
      if (!done()) this.waiters.push(done);
    });
  }
  get allocations() { return this.allocation.flatMap((r) => r.new); }
  get released() { return this.allocation.flatMap((r) => r.released); }
}

function unary(client, method, request, metadata) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata, { deadline: Date.now() + 10000 },
      (error, response) => (error ? reject(error) : resolve(response)));
  });
}

async function main() {
  const args = parseArgs(process.argv);
  const proto = load(args.protoDir);
  const metadata = new grpc.Metadata();
  if (args.token) metadata.set('authorization', `Bearer ${args.token}`);
  const scheduler = new proto.si.v1.Scheduler(args.target, grpc.credentials.createInsecure());
  const ext = new proto.yunikornfsm.ext.v1.SchedulerExtensions(
    args.target, grpc.credentials.createInsecure());
  const rmID = 'node-rm';

  await unary(scheduler, 'RegisterResourceManager', { rmID, config: CONFIG, version: 'node' },
    metadata);

  // One bidirectional stream per kind; the first message names the RM.
  const inbox = new Inbox();
  const streams = {};
  for (const [kind, method] of [['allocation', 'UpdateAllocation'],
    ['application', 'UpdateApplication'], ['node', 'UpdateNode']]) {
    const call = scheduler[method](metadata);
    call.on('data', (message) => inbox.push(kind, message));
    call.on('error', (error) => {
      if (error.code !== grpc.status.CANCELLED) inbox.error = error;
    });
    call.write({ rmID });
    streams[kind] = call;
  }
  const memory = (m) => ({ resources: { memory: { value: m } } });

  // the three streams are independent: wait for each answer before what depends on it
  streams.application.write({ rmID, new: [
    { applicationID: 'app-1', queueName: 'root.apps', ugi: { user: 'alice' } },
    { applicationID: 'gang', queueName: 'root.apps', ugi: { user: 'alice' },
      placeholderAsk: memory(20) }] });
  await inbox.until('applications accepted', (i) => i.application
    .flatMap((r) => r.accepted).length === 2);
  streams.node.write({ rmID, nodes: [{ nodeID: 'node-1', action: 'CREATE',
    schedulableResource: memory(100) }] });
  await inbox.until('node accepted', (i) => i.node.some((r) => r.accepted.length));

  // ask, allocate, release, confirm
  streams.allocation.write({ rmID, asks: [{ allocationKey: 'pod', applicationID: 'app-1',
    resourceAsk: memory(10), maxAllocations: 2 }] });
  const pods = await inbox.until('two allocations', (i) => (i.allocations.length === 2
    ? i.allocations : null));
  const gone = pods[0];
  streams.allocation.write({ rmID, releases: { allocationsToRelease: [{
    applicationID: 'app-1', UUID: gone.UUID, terminationType: 'STOPPED_BY_RM' }] } });
  const confirmed = await inbox.until('the release confirmation',
    (i) => i.released.find((r) => r.UUID === gone.UUID));
  if (confirmed.terminationType !== 'STOPPED_BY_RM') throw new Error('wrong confirmation');

  // a gang: two placeholders, a real ask replaces one, the RM confirms the replacement
  streams.allocation.write({ rmID, asks: [{ allocationKey: 'ph', applicationID: 'gang',
    resourceAsk: memory(10), maxAllocations: 2, taskGroupName: 'tg', placeholder: true }] });
  await inbox.until('two placeholders', (i) => i.allocations
    .filter((a) => a.placeholder).length === 2);
  streams.allocation.write({ rmID, asks: [{ allocationKey: 'real', applicationID: 'gang',
    resourceAsk: memory(10), taskGroupName: 'tg' }] });
  const replaced = await inbox.until('the placeholder release', (i) => i.released
    .find((r) => r.terminationType === 'PLACEHOLDER_REPLACED'));
  streams.allocation.write({ rmID, releases: { allocationsToRelease: [{
    applicationID: 'gang', UUID: replaced.UUID, terminationType: 'PLACEHOLDER_REPLACED' }] } });
  const real = await inbox.until('the real allocation', (i) => i.allocations
    .find((a) => a.allocationKey === 'real'));

  // the RM's view against the core's
  const held = new Set(inbox.allocations.map((a) => a.UUID));
  for (const r of inbox.released) held.delete(r.UUID);
  const dump = JSON.parse((await unary(ext, 'StateDump', {}, metadata)).json);
  const core = new Set(dump.partitions.filter((p) => p.rm_id === rmID)
    .flatMap((p) => p.applications).flatMap((a) => a.allocations).map((a) => a.uuid));
  const same = held.size === core.size && [...held].every((u) => core.has(u));
  if (!same) throw new Error(`views differ: rm ${[...held]} core ${[...core]}`);
  if (inbox.error) throw inbox.error;

  for (const call of Object.values(streams)) call.cancel();
  scheduler.close();
  ext.close();
  console.log(JSON.stringify({
    ok: true, allocations: inbox.allocations.length, released: inbox.released.length,
    real: real.allocationKey, replaced: replaced.UUID, held: [...held].sort(),
  }));
}

main().then(() => process.exit(0), (error) => {
  console.error(`scenario failed: ${error.message || error}`);
  process.exit(1);
});
