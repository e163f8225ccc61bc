// Run once by the `mongo-init` service (mongosh): initiates the replica set rs0 over the three members,
// or finds it initiated on a later `up`, then waits until a primary is elected so the services that
// depend on this one start against a writable set.
const members = ['mongo1:27017', 'mongo2:27017', 'mongo3:27017'];
try {
  rs.status();
  print('rs0 is already initiated');
} catch (error) {
  if (error.codeName !== 'NotYetInitialized') throw error;
  rs.initiate({ _id: 'rs0', members: members.map((host, i) => ({ _id: i, host })) });
  print(`rs0 initiated over ${members.join(', ')}`);
}
for (let second = 0; second < 120; second++) {
  const primary = rs.status().members.find((m) => m.stateStr === 'PRIMARY');
  if (primary) {
    print(`rs0 primary: ${primary.name}`);
    quit(0);
  }
  sleep(1000);
}
print('rs0 elected no primary within 120 s');
quit(1);
