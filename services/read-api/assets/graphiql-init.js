// GraphiQL's bootstrap, served as a file (no inline script): the endpoint comes from the page's
// data-endpoint, the first query from ?query= in the page's URL.
(() => {
  const root = document.getElementById('graphiql');
  const endpoint = new URL(root.dataset.endpoint || '/graphql', window.location.href).href;
  const params = new URLSearchParams(window.location.search);
  const fetcher = window.GraphiQL.createFetcher({ url: endpoint });
  const props = { fetcher };
  const query = params.get('query');
  if (query) props.query = query;
  const variables = params.get('variables');
  if (variables) props.variables = variables;
  window.ReactDOM.createRoot(root).render(window.React.createElement(window.GraphiQL, props));
})();
