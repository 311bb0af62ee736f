// The fleet page for operators: /fleet#token=…[&provider=…][&stale=SECONDS]. The token is a
// server or viewer token; the dispatch queue needs a server token.
(function () {
  'use strict';
  const js = fleetkit.journeySharing;
  const $ = (id) => document.getElementById(id);
  const { params, token, claims, providerId, expired, authTokenFetcher } = js.fragmentCredentials(location.hash);
  const staleSeconds = Number(params.get('stale') || 300);
  const STATE_COLOURS = { busy: '#1a73e8', idle: '#188038', OFFLINE: '#80868b', UNKNOWN_VEHICLE_STATE: '#80868b' };

  function showError(id, text) {
    $(id).textContent = text || '';
    $(id).hidden = !text;
  }

  if (!token || !claims || !providerId) {
    showError('error', !token || !claims
      ? 'This page needs a token: open it as /fleet#token=… (a server or viewer token).'
      : 'Add &provider=… to the address: the token does not say which provider it is for.');
    return;
  }
  if (expired()) {
    showError('error', 'The token in this address has expired. Mint a new one (fleetd token --key …).');
    return;
  }
  $('provider').textContent = providerId;

  const idOf = (vehicle) => vehicle.name.split('/').pop();
  const stateOf = (vehicle) => vehicle.vehicleState === 'ONLINE'
    ? ((vehicle.currentTrips || []).length ? 'busy' : 'idle') : (vehicle.vehicleState || 'UNKNOWN_VEHICLE_STATE');
  const positionOf = (vehicle) => {
    const p = vehicle.lastLocation && vehicle.lastLocation.location;
    return p ? [p.latitude || 0, p.longitude || 0] : null;
  };

  let map = null, cluster = null, selectedLayer = null;
  if (typeof L === 'undefined' || typeof L.markerClusterGroup !== 'function') {
    $('map').innerHTML = js.missingLeafletMessage;
  } else {
    map = L.map('map');
    js.addBasemap(map, '', null, () => true);
    cluster = L.markerClusterGroup({ maxClusterRadius: 45, disableClusteringAtZoom: 17 });
    map.addLayer(cluster);
    selectedLayer = L.layerGroup().addTo(map);
  }

  const markers = new Map();
  let selected = params.get('vehicle') || null;
  let follow = false;
  let latest = [];

  function icon(vehicle) {
    const colour = STATE_COLOURS[stateOf(vehicle)] || '#80868b';
    const heading = (vehicle.lastLocation && vehicle.lastLocation.heading) || 0;
    return L.divIcon({
      className: 'fk-fleet-vehicle', iconSize: [24, 24], iconAnchor: [12, 12],
      html: `<div style="transform: rotate(${heading}deg)"><svg viewBox="0 0 24 24" width="24" height="24">` +
        `<circle cx="12" cy="12" r="9" fill="${colour}" stroke="#fff" stroke-width="2"/>` +
        '<path d="M12 5 L16 14 L12 12 L8 14 Z" fill="#fff"/></svg></div>',
    });
  }

  const provider = new js.FleetEngineFleetLocationProvider({
    providerId, authTokenFetcher, pollingIntervalMillis: 2000, staleLocationThresholdMillis: staleSeconds * 1000,
    vehicleFilter: params.get('filter') || '',
  });
  $('filter').value = provider.vehicleFilter;

  provider.addListener('update', ({ vehicles, all }) => {
    showError('error', '');
    showError('filter-error', '');
    latest = vehicles;
    const count = $('vehicle-count');
    count.dataset.count = String(vehicles.length);
    count.textContent = `${vehicles.length} vehicle${vehicles.length === 1 ? '' : 's'}`;
    const hidden = all.length - vehicles.length;
    $('stale-count').textContent = hidden ? `${hidden} stale hidden` : '';
    drawMarkers(vehicles);
    drawLists(vehicles);
    drawSelection();
  });

  provider.addListener('error', ({ error, filter }) => {
    if (error.status === 'INVALID_ARGUMENT' && filter) {
      showError('filter-error', error.message);
    } else {
      showError('error', `${error.status}: ${error.message}`);
    }
  });

  function drawMarkers(vehicles) {
    if (!cluster) return;
    const seen = new Set();
    for (const vehicle of vehicles) {
      const id = idOf(vehicle);
      const position = positionOf(vehicle);
      if (!position) continue;
      seen.add(id);
      let marker = markers.get(id);
      if (!marker) {
        marker = L.marker(position, { icon: icon(vehicle), title: id });
        marker.on('click', () => select(id));
        markers.set(id, marker);
        cluster.addLayer(marker);
      } else {
        marker.setLatLng(position);
        marker.setIcon(icon(vehicle));
      }
    }
    for (const [id, marker] of markers) {
      if (!seen.has(id)) { cluster.removeLayer(marker); markers.delete(id); }
    }
    cluster.refreshClusters();
  }

  function drawLists(vehicles) {
    const rows = vehicles.slice().sort((a, b) => idOf(a).localeCompare(idOf(b), undefined, { numeric: true }));
    const body = $('vehicles');
    body.replaceChildren(...rows.map((vehicle) => {
      const tr = document.createElement('tr');
      const id = idOf(vehicle);
      tr.className = 'vehicle-row' + (id === selected ? ' selected' : '');
      tr.dataset.vehicle = id;
      const state = stateOf(vehicle);
      tr.innerHTML = `<td></td><td><span class="dot" style="background:${STATE_COLOURS[state] || '#80868b'}"></span>${state === 'busy' || state === 'idle' ? `online, ${state}` : state.toLowerCase()}</td><td>${(vehicle.currentTrips || []).length}</td>`;
      tr.firstChild.textContent = id;
      tr.addEventListener('click', () => select(id));
      return tr;
    }));
    const trips = [];
    for (const vehicle of rows) for (const trip of vehicle.currentTrips || []) trips.push([trip, idOf(vehicle)]);
    $('trips').replaceChildren(...trips.map(([trip, vehicle]) => {
      const tr = document.createElement('tr');
      tr.innerHTML = '<td></td><td></td>';
      tr.children[0].textContent = trip;
      tr.children[1].textContent = vehicle;
      return tr;
    }));
  }

  function select(id) {
    selected = selected === id ? null : id;
    drawLists(latest);
    drawSelection(true);
  }

  function drawSelection(recentre) {
    const details = $('details');
    if (selectedLayer) selectedLayer.clearLayers();
    const vehicle = latest.find((v) => idOf(v) === selected);
    if (!vehicle) { details.hidden = true; return; }
    details.hidden = false;
    const waypoints = vehicle.waypoints || [];
    details.innerHTML = '<strong></strong> <label><input type="checkbox" id="follow"> follow</label>' +
      '<div class="notice" id="detail-trips"></div><div class="notice" id="detail-next"></div>';
    details.querySelector('strong').textContent = idOf(vehicle);
    $('follow').checked = follow;
    $('follow').addEventListener('change', (e) => { follow = e.target.checked; drawSelection(true); });
    $('detail-trips').textContent = (vehicle.currentTrips || []).length
      ? `trips: ${(vehicle.currentTrips || []).join(', ')}` : 'no trips';
    $('detail-next').textContent = waypoints.length
      ? `next: ${waypoints[0].waypointType.replace('_WAYPOINT_TYPE', '').toLowerCase()} of ${waypoints[0].tripId}` : '';
    const position = positionOf(vehicle);
    if (!map || !position) return;
    const route = js.decodePolyline(vehicle.currentRouteSegment || '');
    if (route.length > 1) L.polyline(route, { color: '#1a73e8', weight: 5, opacity: 0.8 }).addTo(selectedLayer);
    for (const w of waypoints) {
      const p = w.location && w.location.point;
      if (!p) continue;
      const colour = w.waypointType === 'PICKUP_WAYPOINT_TYPE' ? '#188038' : w.waypointType === 'DROP_OFF_WAYPOINT_TYPE' ? '#d93025' : '#f29900';
      L.circleMarker([p.latitude || 0, p.longitude || 0], { radius: 7, color: '#fff', weight: 2, fillColor: colour, fillOpacity: 1 })
        .bindTooltip(`${w.waypointType.replace('_WAYPOINT_TYPE', '').toLowerCase()} · ${w.tripId}`).addTo(selectedLayer);
    }
    L.circleMarker(position, { radius: 16, color: '#1a73e8', weight: 2, fill: false }).addTo(selectedLayer);
    if (follow) map.panTo(position, { animate: true });
    else if (recentre) map.setView(position, Math.max(map.getZoom(), 16));
  }

  $('filter-form').addEventListener('submit', (event) => {
    event.preventDefault();
    provider.setVehicleFilter($('filter').value.trim());
  });

  // The dispatch queue: rides waiting, assigned, and those nobody could serve.
  async function refreshQueue() {
    const queue = $('queue');
    let rides = [];
    let pageToken = '';
    try {
      do {
        const query = new URLSearchParams({ pageSize: '1000' });
        if (pageToken) query.set('pageToken', pageToken);
        const response = await fetch(`/fleetkit/v1/providers/${encodeURIComponent(providerId)}/rides?${query}`,
          { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store' });
        if (!response.ok) {
          const error = await js.FleetEngineError.fromResponse(response);
          queue.textContent = error.status === 'PERMISSION_DENIED'
            ? 'The dispatch queue needs a server token.'
            : error.code === 404 || error.status === 'UNIMPLEMENTED' || error.status === 'FAILED_PRECONDITION'
              ? 'fleetd runs without its dispatcher (fleetd serve --dispatch).' : `${error.status}: ${error.message}`;
          return;
        }
        const page = await response.json();
        rides = rides.concat(page.rides || []);
        pageToken = page.nextPageToken || '';
      } while (pageToken);
    } catch (e) {
      queue.textContent = 'fleetd cannot be reached.';
      return;
    } finally {
      setTimeout(refreshQueue, 2000);
    }
    const count = (state) => rides.filter((r) => r.state === state).length;
    const waiting = rides.filter((r) => r.state === 'WAITING');
    queue.innerHTML = '<div class="counts">' +
      `<span data-state="WAITING">${count('WAITING')} waiting</span>` +
      `<span data-state="ASSIGNED">${count('ASSIGNED')} assigned</span>` +
      `<span data-state="COMPLETED">${count('COMPLETED')} completed</span>` +
      `<span data-state="NO_VEHICLE_FOUND">${count('NO_VEHICLE_FOUND')} unserved</span></div>` +
      '<table><tbody id="waiting"></tbody></table>';
    $('waiting').replaceChildren(...waiting.slice(0, 20).map((ride) => {
      const tr = document.createElement('tr');
      const age = ride.createTime ? Math.round((Date.now() - Date.parse(ride.createTime)) / 1000) : 0;
      tr.innerHTML = '<td></td><td></td>';
      tr.children[0].textContent = ride.name.split('/').pop();
      tr.children[1].textContent = `waiting ${age} s`;
      return tr;
    }));
  }

  provider.start();
  refreshQueue();
  window.fleetkitFleet = {
    provider, map, markers,
    visibleVehicleCount: () => latest.length,
    select,
  };
})();
