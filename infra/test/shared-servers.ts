import { get } from 'node:http';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where to ask for the run's shared MongoDB-wire test server (infra/mongodb/vitest-global-setup.ts). */
    mongodbOnDemand: string;
    /** Which server that is, for test names. */
    mongodbServer: string;
    /** Where to ask for the run's shared FerretDB server (infra/ferretdb/vitest-global-setup.ts). */
    ferretdbOnDemand: string;
    /** Which server that is, for test names. */
    ferretdbServer: string;
    /** Where to ask for the run's shared Kafka broker (infra/kafka/vitest-global-setup.ts). */
    kafkaOnDemand: string;
    /** Which broker that is, for test names. */
    kafkaServer: string;
  }
}

/**
 * Asks the run's global setup for its shared server, which starts it on the first request (on-demand.ts).
 * No timeout: on a fresh machine the first start fetches the jars with Maven, and the setup's own start
 * timeouts bound the wait.
 */
export function demand(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => (response.statusCode === 200 ? resolve(body) : reject(new Error(body))));
      response.on('error', reject);
    }).on('error', reject);
  });
}

/** The URI of the run's shared MongoDB-wire test server; each test uses a database of its own. */
export const sharedMongodbUri = (): Promise<string> => demand(inject('mongodbOnDemand'));

/**
 * The URI of the run's shared FerretDB server, the second MongoDB-wire server the adapter's contract
 * suites run on; each test uses a database of its own.
 */
export const sharedFerretdbUri = (): Promise<string> => demand(inject('ferretdbOnDemand'));

/** The bootstrap address of the run's shared Kafka broker; each test uses a topic of its own. */
export const sharedKafkaBrokers = (): Promise<string> => demand(inject('kafkaOnDemand'));
