package homeassistant

import (
	"fmt"
	"maps"
)

// EventNotificationAction is the event the companion app fires when a
// notification action is pressed.
const EventNotificationAction = "mobile_app_notification_action"

// PhoneNotification is one notify.mobile_app_* call the fake received.
type PhoneNotification struct {
	Service string
	Title   string
	Message string
	// Data is the call's data.data (tag, actions, group…).
	Data map[string]any
}

// Tag is the notification's data.tag ("" without one).
func (n PhoneNotification) Tag() string {
	t, _ := n.Data["tag"].(string)
	return t
}

// Actions are the notification's data.actions.
func (n PhoneNotification) Actions() []map[string]any {
	var out []map[string]any
	list, _ := n.Data["actions"].([]any)
	for _, a := range list {
		if m, ok := a.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// mobileApp is one phone with the companion app: its notify service and
// the notifications it shows (by tag; untagged ones under "").
type mobileApp struct {
	received []PhoneNotification
	shown    map[string]PhoneNotification
	// userID is the phone's owner: the mobile_app integration fires the
	// companion app's events with a context naming them.
	userID string
}

// SetMobileAppUser says whose phone service is (a Home Assistant user id):
// its notification actions are fired with that user in their context, as
// the mobile_app integration does (registration_context).
func (s *Server) SetMobileAppUser(service, userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if app := s.mobileApps[trimNotify(service)]; app != nil {
		app.userID = userID
	}
}

// AddMobileApp registers a phone's notify service ("mobile_app_pixel_8",
// with or without "notify."), as the mobile_app integration does for every
// device with the companion app. Calling an unregistered notify service
// fails with not_found, as in Home Assistant.
func (s *Server) AddMobileApp(service string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := trimNotify(service)
	if s.mobileApps[name] == nil {
		s.mobileApps[name] = &mobileApp{shown: map[string]PhoneNotification{}}
	}
}

func trimNotify(service string) string {
	if len(service) > 7 && service[:7] == "notify." {
		return service[7:]
	}
	return service
}

// PhoneNotifications returns every notification sent to service, in order
// (clear_notification messages included).
func (s *Server) PhoneNotifications(service string) []PhoneNotification {
	s.mu.Lock()
	defer s.mu.Unlock()
	app := s.mobileApps[trimNotify(service)]
	if app == nil {
		return nil
	}
	return append([]PhoneNotification(nil), app.received...)
}

// ShownOnPhone returns the notifications the phone shows now, by tag: a
// notification with the tag of a shown one replaces it; clear_notification
// removes it.
func (s *Server) ShownOnPhone(service string) map[string]PhoneNotification {
	s.mu.Lock()
	defer s.mu.Unlock()
	app := s.mobileApps[trimNotify(service)]
	if app == nil {
		return nil
	}
	return maps.Clone(app.shown)
}

// PressNotificationAction is the person pressing the action of a shown
// notification on the phone (replyText is what they typed for a
// behavior: textInput action; "" for a plain button). The companion app
// fires mobile_app_notification_action (origin REMOTE) with the action id,
// reply_text, and — as the Android app does — the notification's data
// fields (tag, group, title, message). Android dismisses the notification.
// It fails when no shown notification of service has that action.
func (s *Server) PressNotificationAction(service, action, replyText string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	app := s.mobileApps[trimNotify(service)]
	if app == nil {
		return fmt.Errorf("fake home assistant: no phone with notify service %q", service)
	}
	for tag, n := range app.shown {
		for _, a := range n.Actions() {
			if a["action"] != action {
				continue
			}
			data := map[string]any{"action": action, "title": n.Title, "message": n.Message}
			for k, v := range n.Data {
				if k != "actions" {
					data[k] = v
				}
			}
			if replyText != "" {
				data["reply_text"] = replyText
			}
			delete(app.shown, tag)
			s.fireAsLocked(EventNotificationAction, data, "REMOTE", app.userID, nil, nil)
			return nil
		}
	}
	return fmt.Errorf("fake home assistant: no notification on %s shows action %q", service, action)
}

// mobileAppServiceLocked is notify.mobile_app_*: message is required (as
// the notify schema says); "clear_notification" with data.tag clears.
func (s *Server) mobileAppServiceLocked(call *ServiceCall) *serviceError {
	app := s.mobileApps[call.Service]
	msg, ok := call.Data["message"].(string)
	if !ok {
		return &serviceError{code: "invalid_format", message: "required key not provided @ data['message']"}
	}
	title, _ := call.Data["title"].(string)
	inner, _ := call.Data["data"].(map[string]any)
	n := PhoneNotification{Service: call.Service, Title: title, Message: msg, Data: inner}
	app.received = append(app.received, n)
	if msg == "clear_notification" {
		_, call.Changed = app.shown[n.Tag()]
		delete(app.shown, n.Tag())
	} else {
		app.shown[n.Tag()] = n
		call.Changed = true
	}
	call.Applied = true
	return nil
}
