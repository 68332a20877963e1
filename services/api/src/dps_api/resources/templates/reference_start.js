window.ui = SwaggerUIBundle({
  url: {{ document | tojson }},
  dom_id: "#reference",
  deepLinking: true,
  defaultModelsExpandDepth: 0
});
