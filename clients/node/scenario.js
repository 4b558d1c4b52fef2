#!/usr/bin/env node
// A shim in another language: drives `yunikorn-fsm serve` through the SI's
// gRPC service, loading the same protos the server is generated from.
//
//   node scenario.js --target 127.0.0.1:3333 [--token TOKEN] [--proto-dir DIR]
//                    [--dialect seed|today]
//
// seed (si.proto): it registers an RM, adds a node, an application and an
// ask, receives the allocations, releases one and receives the confirmation,
// then runs a gang through placeholder replacement.
// today (si_today.proto): pods by allocationKey, one without a node (the core
// places it) and one bound to its node, a release by key and its
// confirmation, then the application removed: its last pod comes back
// released, STOPPED_BY_RM.
// Either way it checks its view against the core's state dump. Prints one
// JSON line with what it saw; exits 1 on any failure. tests/test_rpc_node.py
// runs it against a server on a free loopback port.
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

function parseArgs(argv) {
  const args = { target: '127.0.0.1:3333', token: null, dialect: 'seed',
                 protoDir: path.join(__dirname, '..', '..', 'scheduler', 'rpc', 'proto') };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
    if (!(key in args)) throw new Error(`unknown option ${argv[i]}`);
    args[key] = argv[i + 1];
  }
  return args;
}

// keepCase: the spec's field names (rmID, UUID, applicationID) as they are
const OPTIONS = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true };

function load(protoDir) {
  const definition = protoLoader.loadSync(['si.proto', 'yunikorn_fsm_ext.proto'],
    { includeDirs: [protoDir], ...OPTIONS });
  return grpc.loadPackageDefinition(definition);
}

// Today's SI: si_today.proto's package is si.today.v1 (so that both protos
// live in one Python process), and the server serves both dialects at
// /si.v1.Scheduler/...; the client calls that path, as a shim compiling
// YuniKorn's own file (package si.v1) does.
function todayScheduler(protoDir) {
  const definition = protoLoader.loadSync('si_today.proto',
    { includeDirs: [protoDir], ...OPTIONS });
  const service = {};
  for (const [name, m] of Object.entries(definition['si.today.v1.Scheduler'])) {
    service[name] = { ...m, path: m.path.replace(/^\/si\.today\.v1\./, '/si.v1.') };
  }
  return grpc.makeGenericClientConstructor(service, 'Scheduler');
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
  if (!['seed', 'today'].includes(args.dialect)) throw new Error(`--dialect ${args.dialect}`);
  const Scheduler = args.dialect === 'today' ? todayScheduler(args.protoDir) : proto.si.v1.Scheduler;
  const scheduler = new Scheduler(args.target, grpc.credentials.createInsecure());
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
  const seen = await (args.dialect === 'today' ? today : seed)(rmID, streams, inbox);

  // the RM's view against the core's
  const id = args.dialect === 'today' ? 'allocationKey' : 'UUID';
  const held = new Set(inbox.allocations.map((a) => a[id]));
  for (const r of inbox.released) held.delete(r[id]);
  const dump = JSON.parse((await unary(ext, 'StateDump', {}, metadata)).json);
  const core = new Set(dump.partitions.filter((p) => p.rm_id === rmID)
    .flatMap((p) => p.applications).flatMap((a) => a.allocations)
    .map((a) => (id === 'UUID' ? a.uuid : a.allocation_key)));
  const same = held.size === core.size && [...held].every((u) => core.has(u));
  if (!same) throw new Error(`views differ: rm ${[...held]} core ${[...core]}`);
  if (inbox.error) throw inbox.error;

  for (const call of Object.values(streams)) call.cancel();
  scheduler.close();
  ext.close();
  console.log(JSON.stringify({
    ok: true, dialect: args.dialect, allocations: inbox.allocations.length,
    released: inbox.released.length, held: [...held].sort(), ...seen,
  }));
}

const memory = (m) => ({ resources: { memory: { value: m } } });

// The seed's SI: asks, allocations by UUID, a gang through placeholder replacement.
async function seed(rmID, streams, inbox) {
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

  return { real: real.allocationKey, replaced: replaced.UUID };
}

// Today's SI: pods by allocationKey, placed by the core or bound by the RM.
async function today(rmID, streams, inbox) {
  streams.application.write({ rmID, new: [
    { applicationID: 'app-1', queueName: 'root.apps', ugi: { user: 'alice' } }] });
  await inbox.until('application accepted', (i) => i.application
    .some((r) => r.accepted.length));
  streams.node.write({ rmID, nodes: [{ nodeID: 'node-1', action: 'CREATE',
    schedulableResource: memory(100) }] });
  await inbox.until('node accepted', (i) => i.node.some((r) => r.accepted.length));

  // a pod without a node (the core places it) and one bound to its node (heard back)
  streams.allocation.write({ rmID, allocations: [
    { allocationKey: 'pod-1', applicationID: 'app-1', resourcePerAlloc: memory(10) },
    { allocationKey: 'bound', applicationID: 'app-1', resourcePerAlloc: memory(20),
      nodeID: 'node-1' }] });
  const pods = await inbox.until('two pods', (i) => (i.allocations.length === 2
    ? i.allocations : null));
  if (pods.some((a) => a.nodeID !== 'node-1')) throw new Error('a pod is not on node-1');

  // a release by key, confirmed by key
  streams.allocation.write({ rmID, releases: { allocationsToRelease: [{
    applicationID: 'app-1', allocationKey: 'pod-1', terminationType: 'STOPPED_BY_RM' }] } });
  const confirmed = await inbox.until('the release confirmation',
    (i) => i.released.find((r) => r.allocationKey === 'pod-1'));
  if (confirmed.terminationType !== 'STOPPED_BY_RM') throw new Error('wrong confirmation');

  // the application removed: its last pod comes back released, as YuniKorn answers
  streams.application.write({ rmID, remove: [{ applicationID: 'app-1' }] });
  const removed = await inbox.until('the removed application\'s pod',
    (i) => i.released.find((r) => r.allocationKey === 'bound'));
  if (removed.terminationType !== 'STOPPED_BY_RM'
      || removed.message !== 'application removed by the RM') {
    throw new Error(`removal answered ${JSON.stringify(removed)}`);
  }
  return { removed: removed.message, placed: pods.map((a) => a.allocationKey).sort() };
}

main().then(() => process.exit(0), (error) => {
  console.error(`scenario failed: ${error.message || error}`);
  process.exit(1);
});
