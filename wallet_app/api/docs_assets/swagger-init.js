// Starts Swagger UI on /api/v1/docs (a file of ours: the CSP allows no inline script).
window.addEventListener("DOMContentLoaded", () => {
  window.ui = SwaggerUIBundle({
    url: "/api/v1/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
  });
});
