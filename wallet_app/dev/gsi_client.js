// Development stand-in for https://accounts.google.com/gsi/client: the popup flows of
// google.accounts.oauth2 (initCodeClient, initTokenClient) against /dev-idp, with the
// same config fields and callback shapes as Google's library.
(function () {
  'use strict';
  var script = document.currentScript;
  var idpOrigin = new URL(script ? script.src : '/', window.location.href).origin;
  var authorizeUrl = idpOrigin + '/dev-idp/authorize';

  function fail(config, type, message) {
    if (typeof config.error_callback === 'function') {
      config.error_callback({ type: type, message: message });
    }
  }

  function openPopup(config, responseType) {
    if (config.ux_mode && config.ux_mode !== 'popup') {
      fail(config, 'unknown', 'Only ux_mode popup is supported by the development provider');
      return;
    }
    var params = new URLSearchParams();
    params.set('client_id', config.client_id || '');
    params.set('scope', config.scope || '');
    params.set('response_type', responseType);
    params.set('redirect_uri', config.redirect_uri || 'postmessage');
    if (config.state) params.set('state', config.state);
    var hint = config.login_hint || config.hint;
    if (hint) params.set('login_hint', hint);
    var prompt = config.prompt;
    if (prompt === undefined && config.select_account) prompt = 'select_account';
    if (prompt) params.set('prompt', prompt);

    var popup = window.open(authorizeUrl + '?' + params.toString(), 'nb-dev-idp', 'popup,width=480,height=640');
    if (!popup) {
      fail(config, 'popup_failed_to_open', 'Failed to open popup window');
      return;
    }
    var done = false;
    function finish() {
      done = true;
      clearInterval(timer);
      window.removeEventListener('message', onMessage);
    }
    function onMessage(event) {
      if (done || event.source !== popup || event.origin !== idpOrigin) return;
      finish();
      try { popup.close(); } catch (e) { /* already closed */ }
      if (typeof config.callback === 'function') config.callback(event.data);
    }
    // Closing the popup without an answer reports popup_closed, as Google's library does.
    var timer = setInterval(function () {
      if (!done && popup.closed) {
        finish();
        fail(config, 'popup_closed', 'Popup window closed');
      }
    }, 300);
    window.addEventListener('message', onMessage);
  }

  function merged(config, overrides) {
    var out = {};
    var k;
    for (k in config) out[k] = config[k];
    for (k in overrides || {}) out[k] = overrides[k];
    return out;
  }

  function hasGrantedAllScopes(tokenResponse) {
    var granted = ((tokenResponse && tokenResponse.scope) || '').split(' ');
    for (var i = 1; i < arguments.length; i++) {
      if (granted.indexOf(arguments[i]) < 0) return false;
    }
    return true;
  }

  window.google = window.google || {};
  window.google.accounts = window.google.accounts || {};
  window.google.accounts.oauth2 = {
    initCodeClient: function (config) {
      return { requestCode: function () { openPopup(config, 'code'); } };
    },
    initTokenClient: function (config) {
      return {
        requestAccessToken: function (overrides) { openPopup(merged(config, overrides), 'token'); },
      };
    },
    hasGrantedAllScopes: hasGrantedAllScopes,
    hasGrantedAnyScope: function (tokenResponse) {
      var granted = ((tokenResponse && tokenResponse.scope) || '').split(' ');
      for (var i = 1; i < arguments.length; i++) {
        if (granted.indexOf(arguments[i]) >= 0) return true;
      }
      return false;
    },
    // As Google's: POST the token to the provider's revoke endpoint; /dev-drive refuses it afterwards.
    revoke: function (token, done) {
      var report = function (result) { if (typeof done === 'function') done(result); };
      fetch(idpOrigin + '/dev-idp/revoke', {
        method: 'POST',
        credentials: 'omit',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: String(token || '') }).toString(),
      }).then(function (resp) {
        if (resp.ok) return report({ successful: true });
        return resp.json().then(
          function (body) { report({ successful: false, error: body.error, error_description: body.error_description }); },
          function () { report({ successful: false, error: 'invalid_request' }); }
        );
      }, function () { report({ successful: false, error: 'network_error' }); });
    },
  };
})();
