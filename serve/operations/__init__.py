"""What operators and balancers read: health and readiness (``routes_health``), Prometheus
metrics shared by the workers (``metrics``), the JSON access log (``access_log``) and the
middleware that feeds both (``observe``)."""
