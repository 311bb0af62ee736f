// The shipment tracking page: /track/{tracking_id}#token=…[&provider=…], on FleetKit's
// journey-sharing library. The token is the recipient's (a deliveryconsumer token for this
// tracking ID), as a shipper's site would pass it. What it shows is what the task's tracking
// view config lets the consumer see: fleetd leaves the rest out.
(function () {
  'use strict';
  const js = fleetkit.journeySharing;
  const $ = (id) => document.getElementById(id);
  const trackingId = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() || '');
  const { token, claims, providerId, expired, authTokenFetcher } = js.fragmentCredentials(location.hash);

  function showMessage(text, kind) {
    const box = $('message');
    box.textContent = text;
    box.dataset.kind = kind || 'error';
    box.hidden = !text;
  }

  function fail(text, kind) {
    const banner = $('banner');
    banner.textContent = 'Tracking unavailable';
    banner.dataset.status = 'ERROR';
    showMessage(text, kind || 'error');
    if (typeof L === 'undefined') $('map').innerHTML = js.missingLeafletMessage;
  }

  if (!token || !claims) {
    fail('This link is not valid: it carries no tracking token.');
    return;
  }
  if (expired()) {
    fail('This link has expired. Ask for a new one.', 'expired');
    return;
  }
  if (!providerId) {
    fail('This link does not say which provider the shipment belongs to (add &provider=… to it).');
    return;
  }

  const provider = new js.FleetEngineShipmentLocationProvider({ providerId, trackingId, authTokenFetcher });
  const view = { map: null, vehicle: null, destination: null, route: null, fitted: false };
  if (typeof L === 'undefined') {
    $('map').innerHTML = js.missingLeafletMessage;
  } else {
    view.map = L.map($('map'), { zoomControl: true });
    js.addBasemap(view.map, '', undefined, () => !view.fitted);
    view.route = L.polyline([], { color: '#1a73e8', weight: 6, opacity: 0.9 }).addTo(view.map);
  }
  window.fleetkitTrack = { provider, view };

  function minutes(seconds) {
    if (seconds < 60) return 'under a minute';
    const m = Math.round(seconds / 60);
    return m === 1 ? '1 min' : `${m} min`;
  }
  function metres(m) { return m >= 1000 ? `${(m / 1000).toFixed(1)} km` : `${Math.round(m / 10) * 10} m`; }
  function clock(time) { return new Date(time).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }); }
  function point(latLng) { return latLng ? [latLng.latitude || 0, latLng.longitude || 0] : null; }

  function banner(info) {
    const stops = info.remainingStopCount;
    if (info.state === 'CLOSED') {
      if (info.taskOutcome === 'SUCCEEDED') return ['DELIVERED', 'Delivered'];
      if (info.taskOutcome === 'FAILED') return ['ATTEMPTED', 'Delivery attempted: not delivered'];
      return ['CLOSED', 'This shipment is no longer on its way'];
    }
    if (stops === 1) return ['NEXT', 'Your delivery is next'];
    if (typeof stops === 'number') {
      return ['ON_THE_WAY', `Out for delivery: ${stops - 1} ${stops === 2 ? 'stop' : 'stops'} before yours`];
    }
    return ['SCHEDULED', 'Your shipment is scheduled for delivery'];
  }

  function draw(info) {
    if (!view.map) return;
    const destination = point(info.plannedLocation && info.plannedLocation.point);
    if (destination) {
      if (!view.destination) view.destination = L.marker(destination, { icon: js.icons.stop('#d93025', '') }).addTo(view.map);
      view.destination.setLatLng(destination);
    }
    const vehicle = info.state === 'CLOSED' ? null : point(info.vehicleLocation && info.vehicleLocation.location);
    if (vehicle) {
      if (!view.vehicle) view.vehicle = L.marker(vehicle, { icon: js.icons.vehicle(), zIndexOffset: 1000 });
      view.vehicle.setLatLng(vehicle);
      if (!view.map.hasLayer(view.vehicle)) view.vehicle.addTo(view.map);
    } else if (view.vehicle && view.map.hasLayer(view.vehicle)) {
      view.map.removeLayer(view.vehicle);
    }
    const route = info.state === 'CLOSED' ? [] : (info.routePolylinePoints || []).map(point);
    view.route.setLatLngs(route);
    const shown = route.concat([destination, vehicle].filter(Boolean));
    if (shown.length && !view.fitted) {
      view.fitted = true;
      view.map.fitBounds(L.latLngBounds(shown).pad(0.2), { maxZoom: 16 });
    }
  }

  provider.addListener('update', ({ taskTrackingInfo: info }) => {
    showMessage('');
    const [status, text] = banner(info);
    $('banner').dataset.status = status;
    $('banner').textContent = text;
    const eta = $('eta'), stops = $('stops'), distance = $('distance');
    const open = info.state !== 'CLOSED';
    if (open && info.estimatedArrivalTime) {
      const seconds = Math.max(0, (Date.parse(info.estimatedArrivalTime) - Date.now()) / 1000);
      eta.textContent = minutes(seconds);
      eta.dataset.seconds = String(Math.round(seconds));
      eta.title = clock(info.estimatedArrivalTime);
    } else {
      eta.textContent = '–';
      delete eta.dataset.seconds;
      eta.title = '';
    }
    if (open && typeof info.remainingStopCount === 'number') {
      stops.textContent = String(info.remainingStopCount - 1);
      stops.dataset.count = String(info.remainingStopCount - 1);
    } else {
      stops.textContent = '–';
      delete stops.dataset.count;
    }
    if (open && typeof info.remainingDrivingDistanceMeters === 'number') {
      distance.textContent = metres(info.remainingDrivingDistanceMeters);
      distance.dataset.meters = String(info.remainingDrivingDistanceMeters);
    } else {
      distance.textContent = '–';
      delete distance.dataset.meters;
    }
    const window_ = info.targetTimeWindow;
    $('window-row').hidden = !(open && window_ && window_.startTime && window_.endTime);
    if (!$('window-row').hidden) $('window').textContent = `${clock(window_.startTime)} – ${clock(window_.endTime)}`;
    if (info.state === 'CLOSED') {
      showMessage(info.taskOutcome === 'SUCCEEDED'
        ? `Delivered${info.taskOutcomeTime ? ' at ' + clock(info.taskOutcomeTime) : ''}.`
        : 'The driver could not deliver this shipment.', 'final');
    }
    draw(info);
  });

  provider.addListener('error', ({ error }) => {
    switch (error.status) {
      case 'UNAUTHENTICATED':
        fail(expired() ? 'This link has expired. Ask for a new one.' : 'This link is not valid.', expired() ? 'expired' : 'error');
        break;
      case 'NOT_FOUND':
        fail('There is no shipment with this tracking number.', 'not-found');
        break;
      case 'PERMISSION_DENIED':
        fail('This link is not for this shipment.', 'error');
        break;
      default:
        // Network trouble or a restarting server: keep what is shown, say so, keep trying.
        showMessage('Connection lost. Reconnecting…', 'transient');
    }
  });
  provider.start();
})();
